#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "output.h"

static rc_status rc_io_fail(rc_error *err, const char *path, const char *what)
{
    err->status = RC_ERR_IO;
    snprintf(err->file, sizeof err->file, "%s", path);
    err->line = err->column = 0;
    err->field[0] = '\0';
    snprintf(err->message, sizeof err->message, "%s: %s", what,
             strerror(errno));
    return RC_ERR_IO;
}

rc_status rc_out_mkdirs(const char *dir, rc_error *err)
{
    char buf[1024];
    size_t k, len = strlen(dir);
    struct stat st;
    if (len == 0 || len >= sizeof buf) {
        errno = ENAMETOOLONG;
        return rc_io_fail(err, dir, "bad output directory name");
    }
    memcpy(buf, dir, len + 1);
    for (k = 1; k <= len; ++k) {
        if (buf[k] == '/' || buf[k] == '\0') {
            char save = buf[k];
            buf[k] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return rc_io_fail(err, buf, "cannot create directory");
            buf[k] = save;
        }
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return rc_io_fail(err, dir, "output path is not a directory");
    }
    return RC_OK;
}

rc_status rc_out_remove_stale(const char *dir, const char *name,
                              rc_error *err)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (unlink(path) != 0 && errno != ENOENT)
        return rc_io_fail(err, path, "cannot remove stale output");
    return RC_OK;
}

int rc_out_fault_(const char *name)
{
    const char *list = getenv("RICOCHET_FAULT_ENOSPC"), *at;
    size_t n = strlen(name);
    if (!list || !*list)
        return 0;
    for (at = strstr(list, name); at; at = strstr(at + 1, name))
        if ((at == list || at[-1] == ',') && (at[n] == ',' || at[n] == '\0'))
            return 1;
    return 0;
}

void rc_out_fault_redirect_(const char *name, FILE **f)
{
    /* a full disk, for the fault-injection tests: the file exists and
     * every write to it fails as write(2) does on a full disk */
    if (rc_out_fault_(name)) {
        FILE *full = fopen("/dev/full", "w");
        if (full) {
            fclose(*f);
            *f = full;
        }
    }
}

rc_status rc_out_open(rc_outfile *of, const char *dir, const char *name,
                      rc_error *err)
{
    snprintf(of->final_path, sizeof of->final_path, "%s/%s", dir, name);
    snprintf(of->partial_path, sizeof of->partial_path, "%s.partial",
             of->final_path);
    of->f = fopen(of->partial_path, "w");
    if (!of->f)
        return rc_io_fail(err, of->partial_path, "cannot create output file");
    rc_out_fault_redirect_(name, &of->f);
    return RC_OK;
}

/* Flush, fsync and close of->f; RC_OK when every byte reached the disk. */
static rc_status rc_out_close_synced(rc_outfile *of, rc_error *err)
{
    int bad, e = 0;
    if (!of->f)
        return RC_OK;
    bad = ferror(of->f);
    if (fflush(of->f) != 0) {
        bad = 1;
        e = errno;
    }
    /* A write that failed during the run (stdio flushing a full buffer)
     * set the stream's error flag, but its errno is long gone.  A file
     * system with no block left is the cause then (ENOSPC); otherwise
     * the cause is unknown and EIO is reported (below). */
    if (bad && e == 0) {
        struct statvfs sv;
        if (fstatvfs(fileno(of->f), &sv) == 0 && sv.f_bavail == 0)
            e = ENOSPC;
    }
    /* fsync: a rename that reaches the disk before the data would leave a
     * final name over a short file after a crash (EINVAL: a device such
     * as /dev/full that has nothing to sync) */
    if (!bad && fsync(fileno(of->f)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
    }
    if (fclose(of->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    of->f = NULL;
    if (bad) {
        errno = e ? e : EIO;
        return rc_io_fail(err, of->partial_path, "error writing output file");
    }
    return RC_OK;
}

rc_status rc_out_finish(rc_outfile *of, rc_error *err)
{
    return rc_out_close_synced(of, err);
}

rc_status rc_out_commit(rc_outfile *of, rc_error *err)
{
    rc_outfile *one[1];
    one[0] = of;
    return rc_out_commit_all(one, 1, err);
}

rc_status rc_out_commit_all(rc_outfile *const *files, int count, rc_error *err)
{
    rc_status st = RC_OK;
    int k, j, open_ = 0;
    /* first every file closed and synced: one that fails keeps every
     * file under its .partial name */
    for (k = 0; k < count; ++k) {
        if (files[k]->external && files[k]->final_path[0]) {
            int fd = open(files[k]->partial_path, O_RDONLY);
            ++open_;
            if (fd < 0 || fsync(fd) != 0) {
                if (st == RC_OK)
                    st = rc_io_fail(err, files[k]->partial_path,
                                    "error writing output file");
            }
            if (fd >= 0)
                close(fd);
            continue;
        }
        if (!files[k]->f) {
            files[k]->final_path[0] = '\0'; /* not written: nothing to name */
            continue;
        }
        ++open_;
        if (st == RC_OK)
            st = rc_out_close_synced(files[k], err);
        else
            rc_out_abandon(files[k]);
    }
    if (st != RC_OK || open_ == 0)
        return st;
    for (k = 0; k < count; ++k) {
        if (!files[k]->final_path[0])
            continue;
        if (rename(files[k]->partial_path, files[k]->final_path) != 0) {
            int e = errno;
            /* give back the names already taken */
            for (j = 0; j < k; ++j)
                if (files[j]->final_path[0])
                    rename(files[j]->final_path, files[j]->partial_path);
            errno = e;
            return rc_io_fail(err, files[k]->final_path,
                              "cannot rename output file");
        }
    }
    return RC_OK;
}

void rc_out_abandon(rc_outfile *of)
{
    if (of->f)
        fclose(of->f);
    of->f = NULL;
}

void rc_out_diagnostics_header(FILE *f)
{
    fputs("step,time,energy,modified_energy,kinetic,potential,px,py,pz,"
          "lx,ly,lz,min_gap,max_equality_error,active_contacts,reflections,"
          "solver_iterations\n",
          f);
}

void rc_out_diagnostics_row(FILE *f, const rc_diagnostics *d)
{
    /* %.17g: every double round-trips exactly. */
    fprintf(f,
            "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
            "%.17g,%.17g,%.17g,%.17g,%d,%d,%d\n",
            d->step, d->time, d->energy, d->modified_energy, d->kinetic,
            d->potential, d->momentum[0], d->momentum[1], d->momentum[2],
            d->angular_momentum[0], d->angular_momentum[1],
            d->angular_momentum[2], d->min_gap, d->max_equality_error,
            d->active_contacts, d->reflections, d->solver_iterations);
}

/* Extended XYZ (read by OVITO and ASE): positions always as 3 columns
 * (unused axes 0), with radius, masses and momenta per particle. */
rc_status rc_out_xyz_frame(FILE *f, rc_system *sys, const double *mass,
                           const double *radius, double *qbuf, double *pbuf)
{
    int i, k, n = rc_system_count(sys), d = rc_system_dimension(sys);
    rc_system_get_state(sys, qbuf, pbuf);
    fprintf(f, "%d\n", n);
    fprintf(f,
            "Properties=species:S:1:pos:R:3:radius:R:1:masses:R:1:"
            "momenta:R:3 time=%.17g step=%ld dimension=%d pbc=\"F F F\"\n",
            rc_system_time(sys), rc_system_steps_taken(sys), d);
    for (i = 0; i < n; ++i) {
        double q3[3] = {0.0, 0.0, 0.0}, p3[3] = {0.0, 0.0, 0.0};
        for (k = 0; k < d; ++k) {
            q3[k] = qbuf[i * d + k];
            p3[k] = pbuf[i * d + k];
        }
        fprintf(f, "P %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
                q3[0], q3[1], q3[2], radius[i], mass[i], p3[0], p3[1], p3[2]);
    }
    return ferror(f) ? RC_ERR_IO : RC_OK;
}
