/* Checkpoints, exact restart, signals and full disks, end to end through
 * the `ricochet` binary (issue 15):
 *   - a single run, an ensemble and a large system (exact collisions on
 *     the device engine's CPU launcher; a Lennard-Jones system through
 *     GVI; an H5MD trajectory) stopped by SIGTERM exit 143 with their
 *     outputs as .partial and a checkpoint, and `run --restart` ends with
 *     the bytes an uninterrupted run writes (summary.json's timings
 *     aside);
 *   - a run killed outright (SIGKILL) continues from its last periodic
 *     checkpoint (output.checkpoint_every), its outputs cut back to it;
 *   - a damaged checkpoint, one from another version, one whose outputs
 *     were changed, are refused with exit 2 and a message;
 *   - a write failing at any output of any kind of run (a full disk,
 *     RICOCHET_FAULT_ENOSPC) fails the run and leaves no file under a
 *     final name.
 * The stops are real signals sent while the run goes on: the runs are
 * sized to take seconds where the signal comes after a fraction of one.
 * Where the run still finished first, the check says so and fails (the
 * machine was faster than this test assumes: lengthen the runs). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>

#include <zlib.h>

#include "rc_cli_test.h"

#define PY "'" RC_EXAMPLES_DIR

/* Run lengths: seconds in Release; the sanitizer build runs some ten
 * times slower, so a tenth of the work still outlasts the signal. */
#ifdef RICOCHET_SANITIZE_BUILD
#define POGO_DURATION "100000"
#define POGO_MEMBERS "5000"
#define POGO_ENS_DURATION "200"
#define FLUID_N "864"
#define FLUID_DURATION "10"
#define LJ_N "256"
#define LJ_DURATION "1"
#else
#define POGO_DURATION "1000000"
#define POGO_MEMBERS "50000"
#define POGO_ENS_DURATION "2000"
#define FLUID_N "4000"
#define FLUID_DURATION "20"
#define LJ_N "500"
#define LJ_DURATION "2"
#endif

/* Run `ricochet run ARGS` in the background, send it `sig` after
 * `delay` seconds (twice when `twice`), and return its exit status as
 * the shell's wait reports it (128 + signal when killed by one). */
static int run_and_signal(double delay, const char *sig, int twice,
                          const char *fmt, ...)
{
    char args[4096], cmd[8000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd,
             "'%s' run %s --quiet >'%s' 2>'%s' </dev/null & pid=$!; "
             "sleep %g; kill -%s $pid 2>/dev/null; %s wait $pid",
             RC_CLI, args, g_out, g_errf, delay, sig,
             twice ? "kill -TERM $pid 2>/dev/null;" : "");
    return cli_shell(cmd);
}

/* Remove the keys of a summary that measure this process (wall time,
 * rates, memory of grown buffers), recursively. */
static void drop_timings(cJSON *o)
{
    static const char *const keys[] = {"wall_seconds",
                                       "particle_steps_per_second",
                                       "member_steps_per_second",
                                       "seconds",
                                       "engine_bytes_per_particle",
                                       "launches_per_step",
                                       "host_syncs_per_step",
                                       NULL};
    cJSON *c;
    int k;
    if (!o)
        return;
    for (k = 0; keys[k]; ++k)
        cJSON_DeleteItemFromObjectCaseSensitive(o, keys[k]);
    for (c = o->child; c; c = c->next)
        if (cJSON_IsObject(c))
            drop_timings(c);
}

/* dir_a/name and dir_b/name hold the same JSON, timings aside. */
static int same_json(const char *dir_a, const char *dir_b, const char *name)
{
    cJSON *a = json_file(dir_a, name), *b = json_file(dir_b, name);
    int same = 0;
    if (a && b) {
        drop_timings(a);
        drop_timings(b);
        same = cJSON_Compare(a, b, 1);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    return same;
}

/* Compare each named output of two run directories byte for byte (JSON
 * files: timings aside). */
static void check_same_outputs(const char *what, const char *ref,
                               const char *dir, const char *const *names)
{
    char a[1100], b[1100];
    int k;
    for (k = 0; names[k]; ++k) {
        snprintf(a, sizeof a, "%s/%s", ref, names[k]);
        snprintf(b, sizeof b, "%s/%s", dir, names[k]);
        if (strstr(names[k], ".json"))
            RC_CHECK(same_json(ref, dir, names[k]),
                     "%s: %s differs from the uninterrupted run's (timings "
                     "aside)", what, names[k]);
        else
            RC_CHECK(same_file(a, b),
                     "%s: %s differs from the uninterrupted run's", what,
                     names[k]);
    }
}

/* No file in dir has a final name: only .partial files and the
 * checkpoint (and subdirectories). */
static void check_nothing_final(const char *what, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char traces[1100];
    /* an ensemble's traces follow the same rule */
    snprintf(traces, sizeof traces, "%s/traces", dir);
    if (strcmp(dir + (strlen(dir) > 7 ? strlen(dir) - 7 : 0), "/traces") &&
        count_entries(traces) > 0)
        check_nothing_final(what, traces);
    if (!d) {
        RC_CHECK(0, "%s: no output directory %s", what, dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        size_t len = strlen(nm);
        char path[1200];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        if (nm[0] == '.' || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)))
            continue;
        /* checkpoint.rcp.tmp: a SIGKILL that lands while a checkpoint is
         * written leaves the temporary file of that atomic write (never
         * read; the next run removes it) */
        RC_CHECK((len > 8 && !strcmp(nm + len - 8, ".partial")) ||
                     !strcmp(nm, "checkpoint.rcp") ||
                     !strcmp(nm, "checkpoint.rcp.tmp"),
                 "%s: %s/%s has a final name", what, dir, nm);
    }
    closedir(d);
}

/* One kind of run: uninterrupted into ref, stopped by SIGTERM and
 * restarted in dir; the outputs compared. */
static void check_stop_and_restart(const char *what, const char *args,
                                   double delay, const char *const *names)
{
    char ref[600], dir[600], ckpt[700];
    int rc;
    snprintf(ref, sizeof ref, "%s/%s-ref", g_dir, what);
    snprintf(dir, sizeof dir, "%s/%s", g_dir, what);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.rcp", dir);
    rc = cli("run %s --out '%s' --quiet", args, ref);
    RC_CHECK(rc == 0, "%s: uninterrupted run: exit %d: %s", what, rc,
             g_stderr);
    rc = run_and_signal(delay, "TERM", 0, "%s --out '%s'", args, dir);
    RC_CHECK(rc == 143, "%s: SIGTERM: exit %d, want 143 (stderr: %s)%s",
             what, rc, g_stderr,
             rc == 0 ? " -- the run ended before the signal: lengthen it"
                     : "");
    if (rc != 143)
        return;
    RC_CHECK(strstr(g_stderr, "interrupted") &&
                 strstr(g_stderr, "--restart"),
             "%s: the stop says how far it got and how to go on: %s", what,
             g_stderr);
    check_nothing_final(what, dir);
    RC_CHECK(exists(dir, "checkpoint.rcp"), "%s: no checkpoint written",
             what);
    /* threads: summary.json reports them; results do not depend on them */
    rc = cli("run --restart '%s' --quiet --threads 2", ckpt);
    RC_CHECK(rc == 0, "%s: restart: exit %d: %s", what, rc, g_stderr);
    check_same_outputs(what, ref, dir, names);
    RC_CHECK(!exists(dir, "checkpoint.rcp"),
             "%s: a finished run keeps no checkpoint", what);
}

static void test_single(void)
{
    static const char *const names[] = {"diagnostics.csv", "trajectory.xyz",
                                        "summary.json", NULL};
    char ref[600], dir[600], ckpt[700], args[2000];
    int rc;
    /* about 10^7 steps: seconds, where the signal comes at 0.4 s */
    snprintf(args, sizeof args,
             PY "/pogo_stick.yaml' --set integrator.duration=" POGO_DURATION
                " --set output.every=1000 --set output.trajectory=xyz "
                "--set output.trajectory_every=5000 --threads 2");
    check_stop_and_restart("single", args, 0.4, names);

    /* killed outright: back to the last periodic checkpoint, the
     * outputs written after it cut off */
    snprintf(ref, sizeof ref, "%s/single-kill-ref", g_dir);
    snprintf(dir, sizeof dir, "%s/single-kill", g_dir);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.rcp", dir);
    strcat(args, " --set output.checkpoint_every=" POGO_DURATION "e-2");
    rc = cli("run %s --out '%s' --quiet", args, ref);
    RC_CHECK(rc == 0, "single, SIGKILL: uninterrupted run: exit %d", rc);
    rc = run_and_signal(0.8, "KILL", 0, "%s --out '%s'", args, dir);
    RC_CHECK(rc == 137, "single, SIGKILL: exit %d, want 137", rc);
    check_nothing_final("single, SIGKILL", dir);
    RC_CHECK(exists(dir, "checkpoint.rcp"),
             "single, SIGKILL: no periodic checkpoint");
    rc = cli("run --restart '%s' --quiet --threads 2", ckpt);
    RC_CHECK(rc == 0, "single, SIGKILL: restart: exit %d: %s", rc, g_stderr);
    /* a periodic checkpoint changes nothing in the run itself */
    check_same_outputs("single, SIGKILL", ref, dir, names);

    /* a second signal ends the run at once (the shell sees 143 either
     * way; the check is that it does end, and with no final name) */
    snprintf(dir, sizeof dir, "%s/single-twice", g_dir);
    rc = run_and_signal(0.4, "TERM", 1, "%s --out '%s'", args, dir);
    RC_CHECK(rc == 143, "single, two signals: exit %d, want 143", rc);
    check_nothing_final("single, two signals", dir);
}

static void test_ensemble(void)
{
    static const char *const names[] = {"members.csv", "ensemble.json",
                                        "traces/member_0.csv", NULL};
    char args[2000];
    snprintf(args, sizeof args,
             PY "/pogo_ensemble.yaml' --set ensemble.members=" POGO_MEMBERS
                " --set integrator.duration=" POGO_ENS_DURATION " "
                "--threads 2");
    check_stop_and_restart("ensemble", args, 0.5, names);
}

static void test_large(void)
{
    static const char *const names[] = {"observables.csv", "rdf.csv",
                                        "msd.csv", "trajectory.xyz",
                                        "summary.json", NULL};
    static const char *const names_lj[] = {"observables.csv", "rdf.csv",
                                           "msd.csv", "summary.json", NULL};
    char args[2000];
    /* exact collision times on the device engine's CPU launcher */
    snprintf(args, sizeof args,
             PY "/hard_sphere_fluid.yaml' --set lattice.n=" FLUID_N
                " "
                "--set integrator.duration=" FLUID_DURATION " --set output.trajectory=xyz "
                "--set output.trajectory_every=20 --threads 2");
    check_stop_and_restart("large", args, 1.0, names);
    /* a pair potential through GVI, with periodic checkpoints on the
     * way (each one a restart point of the uninterrupted run too) */
    snprintf(args, sizeof args,
             PY "/lj_hard_core.yaml' --set lattice.n=" LJ_N " "
                "--set integrator.duration=" LJ_DURATION " "
                "--set output.checkpoint_every=0.25 --threads 2");
    check_stop_and_restart("large-lj", args, 0.8, names_lj);
}

/* Damaged, foreign and mismatched checkpoints are refused (exit 2). */
static void test_refusals(void)
{
    char dir[600], ckpt[700], bad[700], *buf;
    long size = 0;
    FILE *f;
    int rc;
    snprintf(dir, sizeof dir, "%s/refuse", g_dir);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.rcp", dir);
    rc = run_and_signal(0.4, "TERM", 0,
                        PY "/pogo_stick.yaml' --set integrator.duration="
                           POGO_DURATION " --set output.every=1000 --out '%s'",
                        dir);
    RC_CHECK(rc == 143 && exists(dir, "checkpoint.rcp"),
             "refusals: no checkpoint to damage (exit %d)", rc);
    if (rc != 143)
        return;
    buf = slurp_n(ckpt, &size);
    RC_CHECK(buf && size > 100, "refusals: checkpoint unreadable");
    if (!buf || size <= 100)
        return;

    /* one byte changed in the middle: the checksum */
    snprintf(bad, sizeof bad, "%s/flipped.rcp", g_dir);
    buf[size / 2] ^= 0x40;
    f = fopen(bad, "wb");
    fwrite(buf, 1, (size_t)size, f);
    fclose(f);
    buf[size / 2] ^= 0x40;
    rc = cli("run --restart '%s'", bad);
    RC_CHECK(rc == 2 && strstr(g_stderr, "checksum"),
             "a damaged checkpoint: exit %d, want 2 naming the checksum: %s",
             rc, g_stderr);

    /* cut short */
    snprintf(bad, sizeof bad, "%s/short.rcp", g_dir);
    f = fopen(bad, "wb");
    fwrite(buf, 1, (size_t)size - 10, f);
    fclose(f);
    rc = cli("run --restart '%s'", bad);
    RC_CHECK(rc == 2 && strstr(g_stderr, "checkpoint"),
             "a cut checkpoint: exit %d, want 2: %s", rc, g_stderr);

    /* another version of ricochet (the version field changed and the
     * checksum made right again: only the version check can refuse it) */
    snprintf(bad, sizeof bad, "%s/version.rcp", g_dir);
    {
        char *v = buf + 8 + 16; /* magic, four u32 */
        uint32_t crc;
        memset(v, 0, 32);
        memcpy(v, "0.0.0-other", 11);
        crc = (uint32_t)crc32(0L, (const Bytef *)buf, (uInt)(size - 4));
        memcpy(buf + size - 4, &crc, 4);
        f = fopen(bad, "wb");
        fwrite(buf, 1, (size_t)size, f);
        fclose(f);
    }
    rc = cli("run --restart '%s'", bad);
    RC_CHECK(rc == 2 && strstr(g_stderr, "0.0.0-other"),
             "a checkpoint of another version: exit %d, want 2 naming it: %s",
             rc, g_stderr);
    free(buf);

    /* not a checkpoint at all */
    rc = cli("run --restart " PY "/pogo_stick.yaml'");
    RC_CHECK(rc == 2 && strstr(g_stderr, "checkpoint"),
             "a scenario given as a checkpoint: exit %d: %s", rc, g_stderr);
    /* a scenario and --restart together */
    rc = cli("run " PY "/pogo_stick.yaml' --restart '%s'", ckpt);
    RC_CHECK(rc == 2, "SCENARIO with --restart: exit %d, want 2", rc);

    /* the outputs changed after the checkpoint was taken */
    {
        char part[800];
        snprintf(part, sizeof part, "%s/diagnostics.csv.partial", dir);
        f = fopen(part, "r+b");
        if (f) {
            fputs("XXXX", f);
            fclose(f);
        }
        rc = cli("run --restart '%s'", ckpt);
        RC_CHECK(rc != 0 && strstr(g_stderr, "diagnostics.csv.partial"),
                 "edited outputs: exit %d, want a refusal naming the file: "
                 "%s",
                 rc, g_stderr);
        check_nothing_final("edited outputs", dir);
    }
}

/* A write failing at each output (and at the checkpoint) of each kind of
 * run: the run fails (exit 1) naming the file, and nothing is left under
 * a final name. */
static void test_full_disk(void)
{
    static const struct {
        const char *kind, *args, *outputs;
    } cases[] = {
        {"single",
         PY "/pogo_stick.yaml' --set output.trajectory=xyz "
            "--set output.checkpoint_every=5",
         "diagnostics.csv,trajectory.xyz,summary.json,checkpoint.rcp"},
        {"ensemble",
         PY "/pogo_ensemble.yaml' --set ensemble.members=40 "
            "--set output.checkpoint_every=0.000001s",
         "members.csv,ensemble.json,traces/member_0.csv,checkpoint.rcp"},
        {"grid ensemble",
         PY "/pogo_ensemble.yaml' --set ensemble.members=2 "
            "--set ensemble.grid=true --set 'ensemble.vary=[{path: "
            "integrator.dt, values: [0.1, 0.05]}]'",
         "groups.csv"},
        {"large",
         PY "/granular_column.yaml' --set integrator.duration=0.5 "
            "--set output.trajectory=xyz --set output.checkpoint_every=0.1",
         "observables.csv,rdf.csv,msd.csv,trajectory.xyz,summary.json,"
         "checkpoint.rcp"},
        {"large-h5md",
         PY "/granular_column.yaml' --set integrator.duration=0.5 "
            "--set output.trajectory=h5md",
         "trajectory.h5md"},
    };
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char list[400], *name, *save = NULL;
        snprintf(list, sizeof list, "%s", cases[c].outputs);
        for (name = strtok_r(list, ",", &save); name;
             name = strtok_r(NULL, ",", &save)) {
            char dir[800], env[300], what[300];
            int rc;
            snprintf(dir, sizeof dir, "%s/full-%zu-%d", g_dir, c,
                     (int)(name - list));
            snprintf(env, sizeof env, "RICOCHET_FAULT_ENOSPC=%s", name);
            snprintf(what, sizeof what, "full disk at %s (%s)", name,
                     cases[c].kind);
            if (!strcmp(name, "trajectory.h5md")) {
                /* a build without HDF5 refuses h5md at load */
                rc = cli("validate %s", cases[c].args);
                if (rc != 0)
                    continue;
            }
            rc = cli_env(env, "run %s --out '%s' --quiet", cases[c].args,
                         dir);
            RC_CHECK(rc == 1, "%s: exit %d, want 1 (stderr: %s)", what, rc,
                     g_stderr);
            RC_CHECK(strstr(g_stderr, name) != NULL,
                     "%s: the message does not name the file: %s", what,
                     g_stderr);
            if (count_entries(dir) >= 0)
                check_nothing_final(what, dir);
        }
    }
}

/* A real full disk, where this process may mount a small tmpfs (root):
 * HDF5 and the CSV writers meet ENOSPC from write(2) itself. */
static void test_real_full_disk(void)
{
    static const char *const traj[] = {"h5md", "xyz"};
    char mnt[600], cmd[1400];
    int k;
    snprintf(mnt, sizeof mnt, "%s/tiny", g_dir);
    mkdir(mnt, 0777);
    snprintf(cmd, sizeof cmd,
             "mount -t tmpfs -o size=300k tmpfs '%s' 2>/dev/null", mnt);
    if (system(cmd) != 0) {
        fprintf(stderr, "test_restart: note: cannot mount a tmpfs here; the "
                        "real full disk is not tried (the injected one "
                        "is)\n");
        return;
    }
    for (k = 0; k < 2; ++k) {
        char dir[800], what[100];
        int rc;
        snprintf(dir, sizeof dir, "%s/run-%s", mnt, traj[k]);
        snprintf(what, sizeof what, "a 300 KiB disk (trajectory %s)",
                 traj[k]);
        if (k == 0 && cli("validate " PY "/granular_column.yaml' --set "
                          "output.trajectory=h5md") != 0)
            continue; /* no HDF5 in this build */
        rc = cli("run " PY "/granular_column.yaml' --set "
                 "output.trajectory=%s --out '%s' --quiet",
                 traj[k], dir);
        RC_CHECK(rc == 1, "%s: exit %d, want 1", what, rc);
        RC_CHECK(strstr(g_stderr, "No space left on device") &&
                     !strstr(g_stderr, "HDF5:") &&
                     !strstr(g_stderr, "infinite loop"),
                 "%s: one message naming the cause, nothing from HDF5: %s",
                 what, g_stderr);
        check_nothing_final(what, dir);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        RC_CHECK(system(cmd) == 0, "%s: cannot clear the disk", what);
    }
    /* the disk already nearly full, in steps of 4 KiB: at some levels
     * the file fills up in a buffered write during the run, whose errno
     * stdio does not keep, and the message said "Input/output error"
     * (this machine: 284 KiB of 300 taken; in CI once with none) */
    for (k = 240; k <= 296; k += 4) {
        char dir[800], fill[800], what[100];
        FILE *f;
        int rc, kb;
        snprintf(fill, sizeof fill, "%s/fill", mnt);
        snprintf(dir, sizeof dir, "%s/run-fill", mnt);
        snprintf(what, sizeof what, "a 300 KiB disk with %d KiB taken", k);
        if ((f = fopen(fill, "wb")) != NULL) {
            static const char kib[1024];
            for (kb = 0; kb < k; ++kb)
                if (fwrite(kib, 1, sizeof kib, f) != sizeof kib)
                    break;
            fclose(f);
        }
        rc = cli("run " PY "/granular_column.yaml' --set "
                 "output.trajectory=xyz --out '%s' --quiet",
                 dir);
        RC_CHECK(rc == 1 && strstr(g_stderr, "No space left on device"),
                 "%s: exit %d (want 1), the message names the cause: %s",
                 what, rc, g_stderr);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        RC_CHECK(system(cmd) == 0, "%s: cannot clear the disk", what);
        RC_CHECK(remove(fill) == 0, "%s: cannot remove the filler", what);
    }
    snprintf(cmd, sizeof cmd, "umount '%s'", mnt);
    RC_CHECK(system(cmd) == 0, "cannot unmount %s", mnt);
}

int main(void)
{
    if (cli_test_start("test_restart"))
        return 1;
    test_single();
    test_ensemble();
    test_large();
    test_refusals();
    test_full_disk();
    test_real_full_disk();
    return cli_test_finish("test_restart");
}
