/* Replays files through a fuzz harness without libFuzzer, so that the
 * seed corpora and every past finding (tests/fuzz/corpus/<name>/) run in
 * the ordinary build and under `make check-sanitize` (ctest
 * test_fuzz_replay_<name>).  Arguments: directories or files.  Exit 0
 * when at least one file was replayed (a crash aborts), 1 when none. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            uint8_t *b;
            cap = cap ? 2 * cap : 65536;
            b = (uint8_t *)realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int a, files = 0, bad = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (a = 1; a < argc; ++a) {
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[a]);
            ++bad;
        } else if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[a]);
            struct dirent *e;
            char path[4096];
            while (d && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
                if (replay_file(path) == 0)
                    ++files;
                else
                    ++bad;
            }
            if (d)
                closedir(d);
        } else if (replay_file(argv[a]) == 0) {
            ++files;
        } else {
            ++bad;
        }
    }
    printf("replay: %d files replayed, %d unreadable\n", files, bad);
    return files > 0 && bad == 0 ? 0 : 1;
}
