/* Shared by the libFuzzer harnesses: the loaders under test read files,
 * so each input is written to one scratch file per process first. */
#ifndef RC_FUZZ_COMMON_H
#define RC_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A path $TMPDIR/rc_fuzz_<tag>_XXXXXX (made once, removed at exit) that
 * now holds data[0..size); NULL when it cannot be written (the harness
 * then skips the input).  Needs _POSIX_C_SOURCE 200809L (mkstemp). */
static char rc_fuzz_path_[512];

static void rc_fuzz_cleanup_(void)
{
    if (rc_fuzz_path_[0])
        unlink(rc_fuzz_path_);
}

static const char *rc_fuzz_file(const char *tag, const uint8_t *data,
                                size_t size)
{
    FILE *f;
    if (!rc_fuzz_path_[0]) {
        const char *tmp = getenv("TMPDIR");
        int fd;
        snprintf(rc_fuzz_path_, sizeof rc_fuzz_path_,
                 "%s/rc_fuzz_%s_XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
        fd = mkstemp(rc_fuzz_path_);
        if (fd < 0) {
            rc_fuzz_path_[0] = '\0';
            return NULL;
        }
        close(fd);
        atexit(rc_fuzz_cleanup_);
    }
    f = fopen(rc_fuzz_path_, "wb");
    if (!f)
        return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return rc_fuzz_path_;
}

#endif
