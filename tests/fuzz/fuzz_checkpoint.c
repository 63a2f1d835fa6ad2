/* libFuzzer harness: a checkpoint file -> rc_ckpt_load, the scenario it
 * holds (rc_ckpt_scenario) and every section a restart reads.
 *
 * A mutated file would almost always be refused at its CRC-32 or its
 * version field, which would leave the section walk unexplored: the
 * harness writes this build's version into the header and the right CRC
 * into the trailer first (inputs shorter than a header go in as they
 * are), so the fuzzer reaches the parser behind them.  The refusals of a
 * wrong CRC or version are checked by tests/test_restart.c.
 * Seeds: tests/fuzz/corpus/checkpoint/ (checkpoints of a single run, an
 * ensemble and a large system). */
#define _POSIX_C_SOURCE 200809L
#include <zlib.h>

#include "fuzz_common.h"

#include "host/checkpoint.h"

#ifndef RICOCHET_VERSION
#define RICOCHET_VERSION "unknown"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the sections a restart of any kind reads */
    static const char *const tags[] = {
        "SYSCTR", "SYSQ",   "SYSP",    "STATS",  "STATREL", "WALL",
        "DIAG",   "TRAJ",   "MEMBERS", "NRULES", "EIDX",    "ELONG",
        "EDBL",   "EVAL",   "EMIDX",   "EMSG",   "DCTR",    "DSCAL",
        "DQ",     "DP",     "DIMAGE",  "DQBUILD", "DGRAD",  "MDSTEPS",
        "MDTIME", "MDTOTAL", "LOOPD",  "LOOPL",  "SERN",    "SERZ",
        "RDFH",   "MSDREF", "OBS",     "H5FRAMES", NULL};
    unsigned char *buf;
    const char *path;
    rc_ckpt c;
    rc_error err;
    int k;
    if (size > (1u << 22)) /* 4 MiB: larger inputs add nothing */
        return 0;
    buf = (unsigned char *)malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if (size >= 8 + 16 + 32 + 4) {
        uint32_t crc;
        memset(buf + 24, 0, 32);
        memcpy(buf + 24, RICOCHET_VERSION,
               strlen(RICOCHET_VERSION) < 31 ? strlen(RICOCHET_VERSION) : 31);
        crc = (uint32_t)crc32(0L, buf, (uInt)(size - 4));
        memcpy(buf + size - 4, &crc, 4);
    }
    path = rc_fuzz_file("checkpoint", buf, size);
    free(buf);
    if (!path)
        return 0;
    memset(&err, 0, sizeof err);
    if (rc_ckpt_load(path, &c, &err) != RC_OK) {
        if (!err.message[0])
            abort(); /* a refusal always says why */
        return 0;
    }
    for (k = 0; tags[k]; ++k) {
        size_t n = 0;
        const unsigned char *p =
            (const unsigned char *)rc_ckpt_find(&c, tags[k], &n);
        long v;
        volatile unsigned sum = 0;
        size_t i;
        /* a section found lies inside the file: read all of it */
        for (i = 0; p && i < n; ++i)
            sum += p[i];
        (void)sum;
        (void)rc_ckpt_get_long(&c, tags[k], &v, &err);
    }
    {
        rc_scenario *scn = NULL;
        char dir[1100];
        if (rc_ckpt_scenario(&c, &scn, dir, sizeof dir, &err) == RC_OK)
            rc_scenario_free(scn);
        else if (!err.message[0])
            abort();
    }
    rc_ckpt_free(&c);
    return 0;
}
