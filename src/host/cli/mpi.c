/* Ensembles across MPI processes (`mpirun -np K ricochet run ENSEMBLE`).
 *
 * Each rank runs one contiguous range of the members through the
 * library's rc_ensemble_run_members_, rank 0 gathers the member records
 * (MPI_Gatherv of the rc_member structs and the rule values) and the
 * traces, and writes the outputs through rc_ensemble_write_: the code
 * and the data of a single-process run, so members.csv, groups.csv and
 * the statistics of ensemble.json are the same bytes.  The ranks must
 * run the same ricochet binary (the records travel as bytes).
 *
 * MPI is initialised only when a launcher started the process (Open
 * MPI's OMPI_COMM_WORLD_SIZE, PMI's PMI_SIZE, PMIx's PMIX_RANK): a plain
 * `ricochet` never touches MPI, whose singleton start can be slow or
 * fail without a launcher. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "host/ensemble_impl.h"

#ifdef RICOCHET_HAVE_MPI
#include <mpi.h>
#ifdef RICOCHET_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int g_mpi = 0; /* MPI initialised by rc_cli_mpi_start */
static int g_rank = 0, g_size = 1;

static int rc_cli_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
           getenv("PMIX_RANK");
}

int rc_cli_mpi_start(int *argc, char ***argv)
{
    int provided = 0;
    if (!rc_cli_mpi_launched())
        return 1;
    /* FUNNELED: OpenMP threads run the members, only the main thread
     * calls MPI */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
        return 1;
    g_mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return g_size;
}

int rc_cli_mpi_rank(void)
{
    return g_rank;
}

void rc_cli_mpi_end(void)
{
    if (g_mpi)
        MPI_Finalize();
    g_mpi = 0;
}

const char *rc_cli_mpi_about(void)
{
    static char line[400];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\r\n,")] = '\0';
    snprintf(line, sizeof line,
             "distributed ensembles: MPI (%.300s; mpirun -np K ricochet run)",
             lib);
    return line;
}

/* Members of rank r when [first, end) is cut into size contiguous
 * ranges whose lengths differ by at most one (the first ones longer). */
static void rc_mpi_split(long first, long end, int size, int r, long *a,
                         long *b)
{
    long cnt = end - first, q = cnt / size, rem = cnt % size;
    *a = first + q * r + (r < rem ? r : rem);
    *b = *a + q + (r < rem ? 1 : 0);
}

/* The ranks that share this node: the GPU of a rank is its rank among
 * them, modulo the devices the node has. */
static void rc_mpi_pick_device(const rc_ensemble_options *eo, char *note,
                               size_t size)
{
    MPI_Comm node;
    int local = 0;
    note[0] = '\0';
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank,
                        MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
#ifdef RICOCHET_HAVE_CUDA
    if (eo->device != RC_ENSEMBLE_CPU) {
        int count = 0;
        /* before any other CUDA call of the process: the library's
         * engine then works on the current device (cudaGetDevice) */
        if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 &&
            cudaSetDevice(local % count) == cudaSuccess)
            snprintf(note, size, ", GPU %d of %d", local % count, count);
    }
#else
    (void)eo;
    (void)size;
#endif
    (void)local;
}

/* Send n bytes to rank `to` (or receive from `from`) in pieces that fit
 * MPI's int counts. */
static void rc_mpi_send_bytes(const char *buf, long long n, int to)
{
    long long off = 0;
    MPI_Send(&n, 1, MPI_LONG_LONG, to, 1, MPI_COMM_WORLD);
    while (off < n) {
        int piece = n - off > (1 << 30) ? (1 << 30) : (int)(n - off);
        MPI_Send(buf + off, piece, MPI_BYTE, to, 2, MPI_COMM_WORLD);
        off += piece;
    }
}

static char *rc_mpi_recv_bytes(int from, long long *n)
{
    long long off = 0;
    char *buf;
    MPI_Recv(n, 1, MPI_LONG_LONG, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (*n < 0)
        return NULL;
    buf = (char *)malloc((size_t)*n + 1);
    while (off < *n) {
        int piece = *n - off > (1 << 30) ? (1 << 30) : (int)(*n - off);
        /* without memory the bytes still have to be taken off the wire */
        static char sink[1 << 16];
        if (buf) {
            MPI_Recv(buf + off, piece, MPI_BYTE, from, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            int left = piece;
            while (left > 0) {
                int p = left > (int)sizeof sink ? (int)sizeof sink : left;
                MPI_Recv(sink, p, MPI_BYTE, from, 2, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                left -= p;
            }
        }
        off += piece;
    }
    return buf;
}

static char *rc_mpi_slurp(const char *path, long long *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long size;
    *n = -1;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = (char *)malloc((size_t)size + 1))) {
        if (fread(buf, 1, (size_t)size, f) == (size_t)size) {
            *n = size;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

/* The traces of the ok traced members of the other ranks: each owner
 * reads its OUT/traces/member_K.csv.partial, removes it and sends the
 * bytes; rank 0 writes them under the same name in its OUT (so a run
 * across nodes without a shared file system gets every trace too).
 * Returns 0, or the member whose trace rank 0 could not write. */
static long rc_mpi_gather_traces(const rc_scenario *scn, const char *out,
                                 const rc_ens_records *rec, long first,
                                 long end, const long *lo, const long *hi)
{
    const rc_ensemble_spec *e = &scn->ens;
    long bad = -1;
    int t, u;
    for (t = 0; t < e->ntrace; ++t) {
        long k = e->trace[t];
        int owner = 0, seen = 0;
        char path[1200];
        for (u = 0; u < t; ++u)
            seen |= e->trace[u] == k;
        if (seen || k < first || k >= end) /* (the whole run's range: */
            continue;                         /* rec's is this rank's) */
        while (owner < g_size - 1 && !(k >= lo[owner] && k < hi[owner]))
            ++owner;
        if (owner == 0)
            continue; /* rank 0's own trace is where the outputs go */
        snprintf(path, sizeof path, "%s/traces/member_%ld.csv.partial", out,
                 k);
        if (g_rank == owner) {
            long long n = -1;
            char *buf = NULL;
            if (rec->mb[k].status == RC_MEMBER_OK && !rec->mb[k].trace_errno)
                buf = rc_mpi_slurp(path, &n);
            if (buf)
                unlink(path);
            rc_mpi_send_bytes(buf, buf ? n : -1, 0);
            free(buf);
        } else if (g_rank == 0) {
            long long n = -1;
            char *buf = rc_mpi_recv_bytes(owner, &n);
            if (n >= 0) {
                FILE *f = buf ? fopen(path, "wb") : NULL;
                if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n)
                    bad = k;
                if (f && fclose(f) != 0)
                    bad = k;
            } else if (rec->mb[k].status == RC_MEMBER_OK) {
                bad = k; /* the owner could not read it */
            }
            free(buf);
        }
    }
    return bad;
}

int rc_cli_mpi_ensemble(const rc_scenario *scn, rc_ensemble_options *eo,
                        rc_cli_progress *ps, int quiet)
{
    const rc_ensemble_spec *e = &scn->ens;
    long n = rc_scenario_ensemble_members(scn), first, end, *lo = NULL,
         *hi = NULL;
    int is_range = eo->member_end > 0, r, rc = EXIT_OK, worst = 0;
    rc_ens_records rec;
    rc_ens_meta meta, *metas = NULL, total;
    rc_ensemble_result res;
    rc_error err;
    rc_status st = RC_OK;
    double t0 = MPI_Wtime();
    char where[200], host[MPI_MAX_PROCESSOR_NAME], dev[80];
    int hlen = 0;
    memset(&rec, 0, sizeof rec);
    memset(&meta, 0, sizeof meta);
    memset(&total, 0, sizeof total);
    memset(&err, 0, sizeof err);
    first = is_range ? eo->member_first : 0;
    end = is_range ? eo->member_end : n;
    if (n > 2147483647L) {
        if (g_rank == 0)
            fprintf(stderr, "ricochet: error: an MPI run gathers at most "
                            "2^31-1 members (this ensemble has %ld); run "
                            "ranges with --members and merge them\n",
                    n);
        return EXIT_INPUT;
    }
    lo = (long *)calloc((size_t)g_size, sizeof *lo);
    hi = (long *)calloc((size_t)g_size, sizeof *hi);
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return EXIT_RUNTIME;
    }
    for (r = 0; r < g_size; ++r)
        rc_mpi_split(first, end, g_size, r, &lo[r], &hi[r]);
    rc_mpi_pick_device(eo, dev, sizeof dev);
    MPI_Get_processor_name(host, &hlen);
    snprintf(where, sizeof where, "rank %d of %d on %.100s%s", g_rank,
             g_size, host, dev);
    /* rank 0 clears the output directory before any rank writes a trace
     * into it */
    if (g_rank == 0)
        st = rc_ensemble_prepare_out_(scn, eo->out_dir, 0, &err);
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st != RC_OK) {
        if (g_rank == 0)
            rc_cli_print_error(&err);
        rc = rc_cli_exit_code(st);
        goto done;
    }
    /* every rank: its own members; only rank 0 draws progress */
    if (g_rank != 0)
        ps->enabled = ps->log = 0;
    eo->member_first = lo[g_rank];
    eo->member_end = hi[g_rank];
    st = rc_ensemble_run_members_(
        scn, eo, RC_ENS_PREPARED | RC_ENS_NO_CHECKPOINT | RC_ENS_EMPTY_OK,
        &rec, &meta, &res, &err);
    if (ps->drawn)
        fputc('\n', stderr);
    if (st != RC_OK) {
        fprintf(stderr, "ricochet: %s: ", where);
        rc_cli_print_error(&err);
        rc = res.interrupted && rc_cli_interrupted()
                 ? 128 + rc_cli_interrupted()
                 : rc_cli_exit_code(st);
    }
    /* one failed rank: no outputs (each rank said why) */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst != EXIT_OK) {
        if (rc == EXIT_OK)
            rc = worst;
        if (g_rank == 0)
            fprintf(stderr, "ricochet: the MPI run failed; outputs not "
                            "written\n");
        goto done;
    }
    {
        /* the records: rank r's members land at their index in rank 0's
         * arrays (every rank holds arrays of the ensemble's size) */
        MPI_Datatype member, row;
        int *counts = (int *)calloc((size_t)g_size, sizeof(int));
        int *displs = (int *)calloc((size_t)g_size, sizeof(int));
        int mine = (int)(hi[g_rank] - lo[g_rank]);
        double mm[4], *all = NULL;
        char *etext = NULL;
        int *elen = NULL, *edis = NULL, len;
        if (!counts || !displs)
            MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
        for (r = 0; r < g_size; ++r) {
            counts[r] = (int)(hi[r] - lo[r]);
            displs[r] = (int)lo[r];
        }
        MPI_Type_contiguous((int)sizeof(rc_member), MPI_BYTE, &member);
        MPI_Type_commit(&member);
        MPI_Gatherv(g_rank == 0 ? MPI_IN_PLACE : rec.mb + lo[g_rank], mine,
                    member, rec.mb, counts, displs, member, 0,
                    MPI_COMM_WORLD);
        MPI_Type_free(&member);
        if (e->nrules > 0) {
            MPI_Type_contiguous(e->nrules, MPI_DOUBLE, &row);
            MPI_Type_commit(&row);
            MPI_Gatherv(g_rank == 0 ? MPI_IN_PLACE
                                    : rec.values + lo[g_rank] * e->nrules,
                        mine, row, rec.values, counts, displs, row, 0,
                        MPI_COMM_WORLD);
            MPI_Type_free(&row);
        }
        /* the ranks' metadata: numbers, then the engine texts */
        mm[0] = meta.threads;
        mm[1] = meta.wall_seconds;
        mm[2] = meta.steps;
        len = meta.engine ? (int)strlen(meta.engine) + 1 : 0;
        mm[3] = len;
        if (g_rank == 0) {
            all = (double *)calloc((size_t)g_size * 4, sizeof(double));
            elen = (int *)calloc((size_t)g_size, sizeof(int));
            edis = (int *)calloc((size_t)g_size, sizeof(int));
            if (!all || !elen || !edis)
                MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
        }
        MPI_Gather(mm, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (g_rank == 0) {
            long tot = 0;
            for (r = 0; r < g_size; ++r) {
                elen[r] = (int)all[4 * r + 3];
                edis[r] = (int)tot;
                tot += elen[r];
            }
            etext = (char *)malloc((size_t)tot + 1);
            metas = (rc_ens_meta *)calloc((size_t)g_size, sizeof *metas);
            if (!etext || !metas)
                MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
        }
        MPI_Gatherv(meta.engine ? meta.engine : "", len, MPI_CHAR, etext,
                    elen, edis, MPI_CHAR, 0, MPI_COMM_WORLD);
        {
            /* the ranks' descriptions for ensemble.json's "ranges" */
            char *wall = g_rank == 0 ? (char *)calloc((size_t)g_size,
                                                      sizeof where)
                                     : NULL;
            MPI_Gather(where, (int)sizeof where, MPI_CHAR, wall,
                       (int)sizeof where, MPI_CHAR, 0, MPI_COMM_WORLD);
            for (r = 0; g_rank == 0 && r < g_size; ++r) {
                metas[r].first = lo[r];
                metas[r].end = hi[r];
                metas[r].threads = (int)all[4 * r];
                metas[r].wall_seconds = all[4 * r + 1];
                metas[r].steps = all[4 * r + 2];
                metas[r].engine =
                    elen[r] > 0 ? strdup(etext + edis[r]) : NULL;
                if (wall)
                    snprintf(metas[r].where, sizeof metas[r].where, "%.250s",
                             wall + (size_t)r * sizeof where);
                total.threads += metas[r].threads;
                total.steps += metas[r].steps;
            }
            free(wall);
        }
        free(counts);
        free(displs);
        free(all);
        free(elen);
        free(edis);
        free(etext);
    }
    {
        long bad = rc_mpi_gather_traces(scn, eo->out_dir, &rec, first, end,
                                        lo, hi);
        if (g_rank == 0 && bad >= 0) {
            fprintf(stderr, "ricochet: error: %s/traces/member_%ld.csv: the "
                            "trace of a traced member did not arrive at rank "
                            "0\n",
                    eo->out_dir, bad);
            rc = EXIT_RUNTIME;
        }
    }
    if (g_rank == 0 && rc == EXIT_OK) {
        long k;
        /* rank 0 writes what one process would: the whole run (or the
         * --members range) from the gathered records */
        for (k = first; k < end; ++k)
            rec.fin[k] = 1;
        rec.first = first;
        rec.end = end;
        rec.is_range = is_range;
        rec.deferred = RC_OK;
        total.first = first;
        total.end = end;
        /* wall seconds of the whole: rank 0's, from the start to the
         * gathered records (the ranks ran side by side) */
        total.wall_seconds = MPI_Wtime() - t0;
        total.engine = metas[0].engine;
        st = rc_ensemble_write_(scn, eo->out_dir, eo->threads, &rec, metas,
                                g_size, &total, eo->on_table, eo->table_ctx,
                                &res, &err);
        total.engine = NULL;
        if (st != RC_OK) {
            rc_cli_print_error(&err);
            rc = rc_cli_exit_code(st);
        } else if (!quiet) {
            printf("%s: ensemble of %ld members on %d MPI processes: %ld ok, "
                   "%ld failed, %ld invalid; %.3f s, %.3g member-steps/s\n",
                   rc_scenario_path(scn), end - first, g_size, res.ok,
                   res.failed, res.invalid, res.wall_seconds,
                   res.member_steps_per_second);
            printf("  output: %s/{members.csv,ensemble.json}\n", eo->out_dir);
        }
    }
    /* every rank leaves with the same verdict */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = worst;
done:
    if (metas)
        for (r = 0; r < g_size; ++r)
            rc_ens_meta_free_(&metas[r]);
    free(metas);
    rc_ens_records_free_(&rec);
    rc_ens_meta_free_(&meta);
    free(lo);
    free(hi);
    return rc;
}

#else /* !RICOCHET_HAVE_MPI: one process */

int rc_cli_mpi_start(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 1;
}

int rc_cli_mpi_rank(void)
{
    return 0;
}

void rc_cli_mpi_end(void)
{
}

const char *rc_cli_mpi_about(void)
{
    return "distributed ensembles: built without MPI (ricochet run "
           "--members A:B and ricochet merge instead)";
}

int rc_cli_mpi_ensemble(const rc_scenario *scn, rc_ensemble_options *eo,
                        rc_cli_progress *ps, int quiet)
{
    (void)scn;
    (void)eo;
    (void)ps;
    (void)quiet;
    return EXIT_RUNTIME; /* never called: rc_cli_mpi_start returned 1 */
}

#endif
