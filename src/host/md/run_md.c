/* `ricochet run` for a large system (a scenario with a `box`): set-up,
 * the GVI engine of engine.c, and the observables of DESIGN §6.
 *
 * Writes into the output directory (all as .partial, renamed on success,
 * summary.json last):
 *   observables.csv  every output.every steps: temperature, energies,
 *                    momentum, pressure split into kinetic, force virial
 *                    and collision (impulsive) virial over the interval
 *                    since the previous row, Z = PV/(NkT), collisions in
 *                    the interval, the largest island, the MSD
 *   rdf.csv          g(r) averaged over configurations every
 *                    output.rdf_every steps after equilibration
 *   msd.csv          mean-squared displacement (unwrapped) against the
 *                    time since equilibration
 *   trajectory.xyz   extended XYZ frames (output.trajectory: xyz)
 *   trajectory.h5md  H5MD 1.1 frames and observables (output.trajectory:
 *                    h5md; h5md.h)
 *   summary.json     the scenario, means with block-averaged standard
 *                    errors (Z, collision rate), the Carnahan–Starling
 *                    value, the diffusion coefficient, conservation
 *                    errors, timings of every phase.
 *
 * Pressure: P = N k T / V + (1/(d V)) sum_collisions r_ij . J_ij / dt_row
 * (J_ij the impulse on i, r_ij = q_i - q_j at the reflection) — the
 * collision virial of hard spheres.  T = 2 KE / (d (N - 1)). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include <cjson/cJSON.h>

#include "../clock.h"
#include "dengine.h"
#include "engine.h"
#include "h5md.h"
#include "observables.h"
#include "run_md.h"
#include "setup.h"
#include "../checkpoint.h"
#include "../output.h"
#include "../scenario_impl.h"
#include "../system_impl.h"
#include "../tables.h"

static rc_status rc_md_err(rc_error *err, rc_status st, const char *msg)
{
    err->status = st;
    snprintf(err->message, sizeof err->message, "%.1000s", msg);
    return st;
}

/* The initial state of a scenario with a box: the listed particles, or
 * the lattice with Maxwell–Boltzmann momenta. */
rc_status rc_md_initial_(const rc_scenario *scn, rc_k_box *box,
                               double *q, double *p, double *mass,
                               double *radius, rc_error *err)
{
    const rc_md_spec *ms = &scn->md;
    int i, k, d = scn->dimension, n = scn->n;
    char msg[400];
    memset(box, 0, sizeof *box);
    box->dim = d;
    for (k = 0; k < 3; ++k)
        box->periodic[k] = k < d ? ms->periodic[k] : 0;
    for (i = 0; i < n; ++i) {
        mass[i] = ms->lattice ? ms->mass : scn->particles[i].mass;
        radius[i] = ms->lattice ? rc_md_lattice_radius(ms, i)
                                : scn->particles[i].radius;
    }
    if (ms->have_lengths) {
        for (k = 0; k < d; ++k)
            box->L[k] = ms->lengths[k];
    } else if (rc_md_box_for_packing(d, n, radius, ms->eta, box->periodic,
                                     box) != 0) {
        return rc_md_err(err, RC_ERR_INVALID,
                         "cannot size the box from the packing fraction");
    }
    if (!ms->lattice) {
        for (i = 0; i < n; ++i)
            for (k = 0; k < d; ++k) {
                q[i * d + k] = scn->particles[i].q[k];
                p[i * d + k] = scn->particles[i].p[k];
            }
        return RC_OK;
    }
    {
        /* fill_height: the lattice fills the lowest part of the last
         * axis (a stack on a floor) */
        rc_k_box fill = *box;
        if (ms->fill_height > 0.0)
            fill.L[d - 1] = ms->fill_height;
        if (rc_md_place(ms->kind, &fill, n, radius, ms->seed, q, msg,
                        sizeof msg) != 0) {
            char full[2048];
            snprintf(full, sizeof full, "%s: lattice: %s", scn->path, msg);
            return rc_md_err(err, RC_ERR_INVALID, full);
        }
    }
    rc_md_maxwell(d, n, mass, ms->temperature, ms->seed, p);
    return RC_OK;
}

/* Carnahan–Starling (3-D) and Henderson (2-D) compressibility factors. */
static double rc_md_z_reference(int d, double eta)
{
    if (d == 3)
        return (1.0 + eta + eta * eta - eta * eta * eta) /
               ((1.0 - eta) * (1.0 - eta) * (1.0 - eta));
    return (1.0 + eta * eta / 8.0) / ((1.0 - eta) * (1.0 - eta));
}

typedef struct rc_md_series {
    double *z, *gamma, *temp;
    long n, cap;
    double *msd_t, *msd;
    long nmsd;
} rc_md_series;

static int rc_md_series_push(rc_md_series *s, double z, double g, double t)
{
    if (s->n == s->cap) {
        long cap = s->cap ? 2 * s->cap : 1024;
        double *a = (double *)realloc(s->z, sizeof(double) * (size_t)cap);
        double *b = (double *)realloc(s->gamma, sizeof(double) * (size_t)cap);
        double *c = (double *)realloc(s->temp, sizeof(double) * (size_t)cap);
        double *e = (double *)realloc(s->msd_t, sizeof(double) * (size_t)cap);
        double *f = (double *)realloc(s->msd, sizeof(double) * (size_t)cap);
        if (a)
            s->z = a;
        if (b)
            s->gamma = b;
        if (c)
            s->temp = c;
        if (e)
            s->msd_t = e;
        if (f)
            s->msd = f;
        if (!a || !b || !c || !e || !f)
            return -1;
        s->cap = cap;
    }
    s->z[s->n] = z;
    s->gamma[s->n] = g;
    s->temp[s->n] = t;
    s->n++;
    return 0;
}

/* One extended XYZ frame (ASE's and OVITO's reading): positions, radii,
 * masses and momenta as 3 columns (2-D padded with 0), every double with
 * %.17g so that reading a frame back (read:) gives the state bit for
 * bit; ASE's get_velocities() is momenta / masses.  The species column
 * is output.species (default X, ASE's dummy atom: not a chemical element
 * unless the user names one). */
static void rc_md_xyz(FILE *f, const rc_md *md, const char *species,
                      long step)
{
    int i, k, d = md->dim;
    fprintf(f, "%d\n", md->n);
    fprintf(f,
            "Lattice=\"%.17g 0 0 0 %.17g 0 0 0 %.17g\" Properties=species:"
            "S:1:pos:R:3:radius:R:1:masses:R:1:momenta:R:3 time=%.17g "
            "step=%ld dimension=%d pbc=\"%c %c %c\"\n",
            md->box.L[0], md->box.L[1], d == 3 ? md->box.L[2] : 1.0,
            md->time, step, d, md->box.periodic[0] ? 'T' : 'F',
            md->box.periodic[1] ? 'T' : 'F',
            d == 3 && md->box.periodic[2] ? 'T' : 'F');
    for (i = 0; i < md->n; ++i) {
        fputs(species, f);
        for (k = 0; k < 3; ++k)
            fprintf(f, " %.17g", k < d ? md->q[i * d + k] : 0.0);
        fprintf(f, " %.17g %.17g", md->radius[i], md->mass[i]);
        for (k = 0; k < 3; ++k)
            fprintf(f, " %.17g", k < d ? md->p[i * d + k] : 0.0);
        fputc('\n', f);
    }
}

/* Least-squares slope of y against x. */
static double rc_slope(const double *x, const double *y, long n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, den;
    long i;
    for (i = 0; i < n; ++i) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    den = n * sxx - sx * sx;
    return n >= 2 && den != 0.0 ? (n * sxy - sx * sy) / den : NAN;
}

/* Where the particles came from, and their velocities (summary.json
 * "initial_state"; the CLI prints "note"). */
static void rc_md_initial_state_json(cJSON *o, const rc_scenario *scn)
{
    const rc_md_spec *ms = &scn->md;
    char note[2300];
    if (ms->lattice) {
        cJSON_AddStringToObject(o, "source", "lattice");
        cJSON_AddStringToObject(o, "velocities", "drawn");
        return;
    }
    if (!ms->read_path[0]) {
        cJSON_AddStringToObject(o, "source", "particles");
        cJSON_AddStringToObject(o, "velocities", "given");
        return;
    }
    cJSON_AddStringToObject(o, "source", "read");
    cJSON_AddStringToObject(o, "file", ms->read_path);
    cJSON_AddStringToObject(o, "format", ms->read_h5md ? "h5md" : "xyz");
    cJSON_AddNumberToObject(o, "frame", (double)ms->read_frame);
    if (ms->read_frames >= 0)
        cJSON_AddNumberToObject(o, "frames", (double)ms->read_frames);
    cJSON_AddStringToObject(o, "velocities",
                            ms->read_velocities ? "from the file" : "drawn");
    snprintf(note, sizeof note,
             "started from frame %ld of %s; velocities %s", ms->read_frame,
             ms->read_path,
             ms->read_velocities
                 ? "from the file"
                 : "drawn from Maxwell-Boltzmann (the file has none for "
                   "this frame)");
    cJSON_AddStringToObject(o, "note", note);
}

static void rc_json_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* The wall clock less the engine's four timed phases: the time spent
 * outside them.  The loop's own phases are differences of this clock, so
 * an engine phase running inside one of them (a candidate rebuild for
 * the overlap check of a row) is counted once, by the engine. */
static double rc_md_clock(const rc_md *md)
{
    return rc_now() - (md->t_update + md->t_broad + md->t_contacts +
                       md->t_reflect);
}

/* Steps between g(r) samples when output.rdf_every is not given: as
 * dense as keeps the samples under 5 % of the engine's time over the
 * steps after equilibration (post), but with at least as many samples
 * as hold about 10^6 pair distances in all, up to 10, where the steps
 * allow (a small system's g(r) from one or two configurations would be
 * noise; a sample of 32 000 spheres at rmax = 3 already holds 10^6).
 * The cost comes from the geometry alone, so the choice is
 * deterministic, in units of one pair test of a step's contact screen:
 *   sample  rc_rdf_add: 4 P + 10 a particle, P = rho v_d(rmax) / 2 the
 *           pairs within rmax (the windows of its cell walk test ~3.4 P
 *           candidates, each hit takes a sqrt; the sort into cells, the
 *           copy and the windows ~10);
 *   step    three screens of the candidates within 1.3 diameters, 3
 *           rho v_d(1.3 sigma) / 2, plus 48 a particle (the passes over
 *           the spheres, the islands, the builds).
 * Calibrated on examples/hard_sphere_fluid.yaml (exact collision
 * times, the default) on one thread with the engine of 2026-11-28: a
 * sample costs 2.5 steps there (12.5 ms against 5.0), 2.5 by this
 * count (the constant was 25 when a step cost more pair tests' worth;
 * 2.3 steps on two threads).  Denser fluids have more collisions a step
 * than the count says, so there it errs sparse. */
static long rc_md_rdf_every_default(int d, long n, const rc_k_box *box,
                                    double rmax, double sigma, long post)
{
    double rho, vr, vs, ratio, pairs;
    long every, most, want;
    if (post < 1 || n < 2)
        return 1;
    rho = (double)n / rc_k_box_volume(box);
    vr = d == 3 ? 4.0 / 3.0 * M_PI * rmax * rmax * rmax : M_PI * rmax * rmax;
    vs = d == 3 ? 4.0 / 3.0 * M_PI * pow(1.3 * sigma, 3)
                : M_PI * (1.3 * sigma) * (1.3 * sigma);
    ratio = (4.0 * 0.5 * rho * vr + 10.0) / (3.0 * 0.5 * rho * vs + 48.0);
    /* ceil(ratio / 0.05), bounded for absurd ratios */
    every = ratio < 1e9 ? (long)ceil(ratio / 0.05) : 1000000000L;
    if (every < 1)
        every = 1;
    /* the samples statistics ask for: 10^6 distances within rmax */
    pairs = 0.5 * rho * vr * (double)n;
    want = pairs >= 1e6 ? 1 : pairs > 1e5 ? (long)ceil(1e6 / pairs) : 10;
    most = post >= want ? post / want : 1;
    return every < most ? every : most;
}

/* g(r) beside the engine.  On the GPU the host waits while the device
 * steps, and a g(r) sample on the host cost the H100 run of
 * bench/gpu/run.sh 81 % of its wall time (bench/results/
 * gpu_profile_h100.txt).  So there a sample is taken by a host thread
 * from a copy of the positions while the loop goes on stepping; the next
 * sample, a checkpoint and the end of the loop wait for it.  rc_rdf_add's
 * counts are integers summed in a fixed order, so rdf.csv has the same
 * bytes either way (tests/test_md_backend.c runs the CPU launcher with
 * RICOCHET_RDF_BESIDE=1, which forces this path, and compares).  On the
 * CPU launchers the engine's threads use every core, so there a sample
 * is taken in line. */
typedef struct rc_md_rdf_job {
    rc_rdf *rdf;
    const rc_k_box *box;
    double *q;   /* the copy of the positions: [n * d] */
    long n, cap; /* particles; doubles allocated in q */
    int d, threads, running, failed;
    pthread_t thread;
} rc_md_rdf_job;

static void *rc_md_rdf_job_run(void *arg)
{
    rc_md_rdf_job *j = (rc_md_rdf_job *)arg;
    j->failed = rc_rdf_add(j->rdf, j->box, j->q, j->n, j->threads) != 0;
    return NULL;
}

/* Waits for the sample in flight, if any: 0, or -1 when it failed (out
 * of memory). */
static int rc_md_rdf_wait(rc_md_rdf_job *j)
{
    if (!j->running)
        return 0;
    pthread_join(j->thread, NULL);
    j->running = 0;
    return j->failed ? -1 : 0;
}

/* A sample of q: beside the loop when `beside`, else in line (and in line
 * when no thread can be started).  0, or -1 out of memory. */
static int rc_md_rdf_sample(rc_md_rdf_job *j, int beside, const double *q)
{
    size_t len = (size_t)j->n * (size_t)j->d;
    if (rc_md_rdf_wait(j) != 0)
        return -1;
    if (beside) {
        if ((long)len > j->cap) {
            double *nq =
                (double *)realloc(j->q, sizeof(double) * (len ? len : 1));
            if (!nq)
                return -1;
            j->q = nq;
            j->cap = (long)len;
        }
        memcpy(j->q, q, sizeof(double) * len);
        j->failed = 0;
        if (pthread_create(&j->thread, NULL, rc_md_rdf_job_run, j) == 0) {
            j->running = 1;
            return 0;
        }
    }
    return rc_rdf_add(j->rdf, j->box, q, j->n, j->threads) != 0 ? -1 : 0;
}

/* The backend of a large system: the launcher of the one engine
 * (dengine.h).  cuda (and auto with a device) runs it on the GPU; auto
 * keeps scenarios whose spheres come to rest (gravity, Moreau reflection)
 * on the CPU; cpu and reference run the CPU launcher (reference on one
 * thread).  Sets *ops and *ctx to the launcher; `note` says why auto
 * chose what it chose. */
static rc_status rc_md_backend(const rc_scenario *scn, rc_backend asked,
                               rc_backend *chosen, const rc_dmd_ops **ops,
                               void **ctx, char *note, size_t note_size,
                               rc_error *err)
{
    char why[400] = "";
    *ops = NULL;
    *ctx = NULL;
    note[0] = 0;
    *chosen = asked == RC_BACKEND_REFERENCE ? RC_BACKEND_REFERENCE
                                            : RC_BACKEND_CPU;
    if (asked == RC_BACKEND_CUDA || asked == RC_BACKEND_AUTO) {
        if (asked == RC_BACKEND_AUTO &&
            (scn->integ.reflection == RC_REFLECT_MOREAU ||
             scn->md.gravity[0] != 0.0 || scn->md.gravity[1] != 0.0 ||
             scn->md.gravity[2] != 0.0)) {
            /* spheres that come to rest (on a floor, in a dense packing)
             * form large islands of held contacts, which the host tiers
             * solve: on the GPU each such step copies the islands to the
             * host and back */
            snprintf(note, note_size,
                     "auto chose the cpu: with %s, resting contacts form "
                     "large islands that the host tiers solve, which on the "
                     "GPU costs copies every step (--backend cuda runs it "
                     "there anyway)",
                     scn->integ.reflection == RC_REFLECT_MOREAU
                         ? "Moreau reflection (dense packings)"
                         : "gravity");
            goto cpu;
        }
#ifdef RICOCHET_HAVE_CUDA
        if (rc_cuda_md_launcher(ops, ctx, why, sizeof why) == RC_OK) {
            *chosen = RC_BACKEND_CUDA;
            return RC_OK;
        }
#else
        snprintf(why, sizeof why,
                 "this build has no CUDA backend (nvcc was not found)");
#endif
        if (asked == RC_BACKEND_CUDA) {
            char msg[600];
            snprintf(msg, sizeof msg, "backend cuda requested but %s", why);
            return rc_md_err(err, RC_ERR_UNSUPPORTED, msg);
        }
        snprintf(note, note_size, "auto chose the cpu: %s", why);
    }
cpu:
    if (rc_dmd_cpu_launcher(ops, ctx) != RC_OK)
        return rc_md_err(err, RC_ERR_NOMEM, "out of memory");
    return RC_OK;
}

/* The run loop's own state at a step boundary (run_md.c's locals), for
 * checkpoints: the rows' accumulators, the conservation baselines and
 * extremes, the timings. */
/* The observables of an H5MD trajectory (observables/<name>), in this
 * order: one row per frame, the values of observables.csv's row at the
 * frame's step or the last one before it (its step and time stored with
 * it), so that readers that pair observables with frames by index
 * (MDAnalysis's ts.data) get the right row. */
static const char *const rc_md_h5_obs[] = {
    "temperature", "kinetic_energy", "potential_energy", "total_energy",
    "pressure", "compressibility_factor", "collisions"};
#define RC_MD_H5_NOBS ((int)(sizeof rc_md_h5_obs / sizeof rc_md_h5_obs[0]))

typedef struct rc_md_loop {
    double row_virial, row_time, ke_max_dev, p_max_dev, kin0, pot0, mom0[3];
    double max_overlap, t_obs, t_rdf, t_traj, t_rows, wall;
    long row_coll, rdf_ok;
    /* the last observables row, for the next H5MD frame */
    double obs_row[RC_MD_H5_NOBS], obs_time;
    long obs_step;
} rc_md_loop;
#define RC_MD_LOOP_DOUBLES (16 + RC_MD_H5_NOBS)
#define RC_MD_LOOP_LONGS 3

static void rc_md_loop_pack(const rc_md_loop *l, double *x, int64_t *c)
{
    x[0] = l->row_virial;
    x[1] = l->row_time;
    x[2] = l->ke_max_dev;
    x[3] = l->p_max_dev;
    x[4] = l->kin0;
    x[5] = l->pot0;
    x[6] = l->mom0[0];
    x[7] = l->mom0[1];
    x[8] = l->mom0[2];
    x[9] = l->max_overlap;
    x[10] = l->t_obs;
    x[11] = l->t_rdf;
    x[12] = l->t_traj;
    x[13] = l->t_rows;
    x[14] = l->wall;
    x[15] = l->obs_time;
    memcpy(x + 16, l->obs_row, sizeof l->obs_row);
    c[0] = l->row_coll;
    c[1] = l->rdf_ok;
    c[2] = l->obs_step;
}

static void rc_md_loop_unpack(rc_md_loop *l, const double *x, const int64_t *c)
{
    l->row_virial = x[0];
    l->row_time = x[1];
    l->ke_max_dev = x[2];
    l->p_max_dev = x[3];
    l->kin0 = x[4];
    l->pot0 = x[5];
    l->mom0[0] = x[6];
    l->mom0[1] = x[7];
    l->mom0[2] = x[8];
    l->max_overlap = x[9];
    l->t_obs = x[10];
    l->t_rdf = x[11];
    l->t_traj = x[12];
    l->t_rows = x[13];
    l->wall = x[14];
    l->obs_time = x[15];
    memcpy(l->obs_row, x + 16, sizeof l->obs_row);
    l->row_coll = (long)c[0];
    l->rdf_ok = (long)c[1];
    l->obs_step = (long)c[2];
}

/* The outputs a large system writes, in commit order (summary last). */
typedef struct rc_md_outs {
    rc_outfile *obs, *rdff, *msdf, *traj;
    rc_h5md **h5;
} rc_md_outs;

/* The engine's timings and counters kept in md (the state is the
 * launcher's: rc_dmd_checkpoint). */
#define RC_MD_TIMES 5

static rc_status rc_md_checkpoint(const rc_scenario *scn,
                                  const rc_run_options *opt, rc_dmd *dev,
                                  rc_md *md, const rc_md_loop *loop,
                                  const rc_md_series *ser, const rc_rdf *rdf,
                                  int have_ref, rc_md_outs *o, rc_error *err)
{
    rc_ckpt_writer w;
    rc_status st;
    const double *ref = NULL;
    double *refbuf = NULL;
    double x[RC_MD_LOOP_DOUBLES], t[RC_MD_TIMES];
    int64_t c[RC_MD_LOOP_LONGS], frames = rc_h5md_frames(*o->h5),
                  rows = rc_h5md_rows(*o->h5);
    size_t N = (size_t)md->n * (size_t)md->dim, sb = sizeof(double) *
                                                       (size_t)ser->n;
    if ((st = rc_ckpt_begin(&w, opt->out_dir, RC_CKPT_LARGE, err)) != RC_OK)
        return st;
    if ((st = rc_ckpt_put_scenario(&w, scn, opt->out_dir, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "OBS", o->obs, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "RDF", o->rdff, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "MSD", o->msdf, err)) != RC_OK ||
        (st = rc_ckpt_put_output(&w, "TRAJ", o->traj, err)) != RC_OK)
        goto fail;
    if ((st = rc_dmd_checkpoint(dev, &w)) != RC_OK) {
        err->status = st;
        snprintf(err->message, sizeof err->message, "%s", md->msg);
        goto fail;
    }
    rc_ckpt_put_long(&w, "MDSTEPS", md->steps);
    rc_ckpt_put(&w, "MDTIME", &md->time, sizeof md->time);
    rc_ckpt_put(&w, "MDTOTAL", &md->total, sizeof md->total);
    t[0] = md->t_update;
    t[1] = md->t_broad;
    t[2] = md->t_contacts;
    t[3] = md->t_reflect;
    t[4] = 0.0;
    rc_ckpt_put(&w, "MDTIMES", t, sizeof t);
    rc_md_loop_pack(loop, x, c);
    rc_ckpt_put(&w, "LOOPD", x, sizeof x);
    rc_ckpt_put(&w, "LOOPL", c, sizeof c);
    rc_ckpt_put(&w, "H5FRAMES", &frames, sizeof frames);
    rc_ckpt_put(&w, "H5ROWS", &rows, sizeof rows);
    rc_ckpt_put_long(&w, "SERN", ser->n);
    rc_ckpt_put(&w, "SERZ", ser->z, sb);
    rc_ckpt_put(&w, "SERG", ser->gamma, sb);
    rc_ckpt_put(&w, "SERT", ser->temp, sb);
    rc_ckpt_put(&w, "SERMT", ser->msd_t, sb);
    rc_ckpt_put(&w, "SERM", ser->msd, sb);
    rc_ckpt_put_long(&w, "RDFN", rdf->samples);
    rc_ckpt_put_long(&w, "RDFP", rdf->n);
    rc_ckpt_put(&w, "RDFV", &rdf->volume, sizeof rdf->volume);
    rc_ckpt_put(&w, "RDFH", rdf->hist, sizeof(double) * (size_t)rdf->nbins);
    if (have_ref) {
        /* the engine's reference (on host memory, the array itself) */
        if ((st = rc_dmd_get_ref(dev, &ref, &refbuf)) != RC_OK) {
            err->status = st;
            snprintf(err->message, sizeof err->message, "%s", md->msg);
            free(refbuf);
            goto fail;
        }
        rc_ckpt_put(&w, "MSDREF", ref, sizeof(double) * N);
        free(refbuf);
    }
    return rc_ckpt_finish(&w, err);
fail:
    rc_ckpt_abandon(&w);
    return st;
}

static rc_status rc_md_restore(const rc_run_options *opt, rc_dmd *dev,
                               rc_md *md, rc_md_loop *loop, rc_md_series *ser,
                               rc_rdf *rdf, int *have_ref,
                               rc_md_outs *o, int want_traj, int want_h5,
                               const char *h5path, rc_error *err)
{
    rc_ckpt c;
    rc_status st;
    double x[RC_MD_LOOP_DOUBLES], t[RC_MD_TIMES];
    int64_t cl[RC_MD_LOOP_LONGS], frames = 0, rows = 0;
    long sern = 0, rdfn = 0;
    size_t N = (size_t)md->n * (size_t)md->dim, refb = 0;
    const void *refp;
    if ((st = rc_ckpt_load(opt->restart, &c, err)) != RC_OK)
        return st;
    if (c.kind != RC_CKPT_LARGE) {
        st = rc_ckpt_corrupt(&c, err, "it is not a large system's "
                                      "checkpoint");
        goto done;
    }
    /* the MSD reference first: its copy is not counted in the engine's
     * launches, which rc_dmd_restore sets to the checkpoint's */
    refp = rc_ckpt_find(&c, "MSDREF", &refb);
    *have_ref = refp != NULL;
    if (refp) {
        if (refb != sizeof(double) * N) {
            st = rc_ckpt_corrupt(&c, err, "its MSD reference is damaged");
            goto done;
        }
        if ((st = rc_dmd_set_ref(dev, (const double *)refp)) != RC_OK) {
            st = rc_md_err(err, st, md->msg);
            goto done;
        }
    }
    if ((st = rc_dmd_restore(dev, &c, err)) != RC_OK ||
        (st = rc_ckpt_get_long(&c, "MDSTEPS", &md->steps, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "MDTIME", &md->time, sizeof md->time, err)) !=
            RC_OK ||
        (st = rc_ckpt_get(&c, "MDTOTAL", &md->total, sizeof md->total,
                          err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "MDTIMES", t, sizeof t, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "LOOPD", x, sizeof x, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "LOOPL", cl, sizeof cl, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "H5FRAMES", &frames, sizeof frames, err)) !=
            RC_OK ||
        (st = rc_ckpt_get(&c, "H5ROWS", &rows, sizeof rows, err)) != RC_OK ||
        (st = rc_ckpt_get_long(&c, "SERN", &sern, err)) != RC_OK ||
        (st = rc_ckpt_get_long(&c, "RDFN", &rdfn, err)) != RC_OK ||
        (st = rc_ckpt_get_long(&c, "RDFP", &rdf->n, err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "RDFV", &rdf->volume, sizeof rdf->volume,
                          err)) != RC_OK ||
        (st = rc_ckpt_get(&c, "RDFH", rdf->hist,
                          sizeof(double) * (size_t)rdf->nbins, err)) != RC_OK)
        goto done;
    md->t_update = t[0];
    md->t_broad = t[1];
    md->t_contacts = t[2];
    md->t_reflect = t[3];
    rc_md_loop_unpack(loop, x, cl);
    rdf->samples = rdfn;
    if (sern < 0 || sern > md->steps + 1) {
        st = rc_ckpt_corrupt(&c, err, "its averages are damaged");
        goto done;
    }
    if (sern > 0) {
        size_t sb = sizeof(double) * (size_t)sern;
        double **arr[5];
        const char *tags[5] = {"SERZ", "SERG", "SERT", "SERMT", "SERM"};
        int a;
        arr[0] = &ser->z;
        arr[1] = &ser->gamma;
        arr[2] = &ser->temp;
        arr[3] = &ser->msd_t;
        arr[4] = &ser->msd;
        for (a = 0; a < 5; ++a) {
            *arr[a] = (double *)malloc(sb + 64 * sizeof(double));
            if (!*arr[a]) {
                st = err->status = RC_ERR_NOMEM;
                snprintf(err->message, sizeof err->message, "out of memory");
                goto done;
            }
            if ((st = rc_ckpt_get(&c, tags[a], *arr[a], sb, err)) != RC_OK)
                goto done;
        }
        ser->n = ser->nmsd = sern;
        ser->cap = sern + 64;
    }
    if ((st = rc_ckpt_reopen_output(&c, "OBS", o->obs, opt->out_dir,
                                    "observables.csv", err)) != RC_OK ||
        (st = rc_ckpt_reopen_output(&c, "RDF", o->rdff, opt->out_dir,
                                    "rdf.csv", err)) != RC_OK ||
        (st = rc_ckpt_reopen_output(&c, "MSD", o->msdf, opt->out_dir,
                                    "msd.csv", err)) != RC_OK ||
        (st = rc_ckpt_reopen_output(&c, "TRAJ", o->traj, opt->out_dir,
                                    "trajectory.xyz", err)) != RC_OK)
        goto done;
    if (!o->obs->f || !o->rdff->f || !o->msdf->f || (want_traj && !o->traj->f)) {
        st = rc_ckpt_corrupt(&c, err, "it records other outputs than this "
                                      "scenario writes");
        goto done;
    }
    if (want_h5) {
        char msg[600];
        if (rc_h5md_reopen(o->h5, h5path, md->n, md->dim, md->box.L, 1,
                           (long)frames, rc_md_h5_obs, RC_MD_H5_NOBS,
                           (long)rows, msg, sizeof msg) != 0) {
            st = rc_md_err(err, RC_ERR_STATE, msg);
            goto done;
        }
    }
done:
    rc_ckpt_free(&c);
    return st;
}

void rc_md_params_(const rc_scenario *scn, int threads, rc_md_params *par)
{
    int k;
    memset(par, 0, sizeof *par);
    par->dt = scn->integ.dt;
    for (k = 0; k < 3; ++k)
        par->gravity[k] = k < scn->dimension ? scn->md.gravity[k] : 0.0;
    par->threads = threads;
    par->max_passes = scn->integ.max_reflection_passes;
    par->moreau = scn->integ.reflection == RC_REFLECT_MOREAU;
    if (scn->md.pair >= 0) {
        par->has_pair = 1;
        par->pair_cut =
            rc_pair_potential_form_(&scn->potentials[scn->md.pair], &par->pair);
    }
    /* collisions: auto takes exact impact times for ballistic spheres
     * (no pair potential) without gravity (spheres coming to rest on a
     * floor would bounce without end) and with generalized reflection */
    par->exact = scn->integ.collisions == RC_COLLISIONS_EXACT ||
                (scn->integ.collisions == RC_COLLISIONS_AUTO &&
                 !par->has_pair && !par->moreau && par->gravity[0] == 0.0 &&
                 par->gravity[1] == 0.0 && par->gravity[2] == 0.0);
    par->dense_max = 64;   /* the kernel's NNLS: small islands */
    par->lapack_max = 512; /* Cholesky active set: O(m^3), medium islands */
    par->pgs_tol = 1e-10;
    par->pgs_max_iter = 100000;
}

void rc_md_pressure_(const rc_md *md, double kin, double virial, double dt,
                     double *T, double *pk, double *pv, double *pc, double *z)
{
    int n = md->n, d = md->dim;
    double vol = rc_k_box_volume(&md->box);
    *T = n > 1 ? 2.0 * kin / (d * (n - 1.0)) : 0.0;
    *pk = n * *T / vol;
    *pc = dt > 0.0 ? virial / (d * vol * dt) : 0.0;
    *pv = md->virial_force / (d * vol);
    *z = *T > 0.0 ? (*pk + *pv + *pc) * vol / (n * *T) : NAN;
}

rc_status rc_md_run_(const rc_scenario *scn, const rc_run_options *opt,
                     rc_md_run_info *info_out, rc_run_result *result,
                     rc_error *err)
{
    static const char *const outputs[] = {
        "summary.json", "observables.csv", "rdf.csv", "msd.csv",
        "trajectory.xyz", "diagnostics.csv", "summary.json.partial",
        "observables.csv.partial", "rdf.csv.partial", "msd.csv.partial",
        "trajectory.xyz.partial", "trajectory.h5md", "trajectory.h5md.partial",
        RC_CKPT_NAME, NULL};
    rc_run_result res;
    rc_md_run_info info;
    rc_scenario_run sr;
    rc_md md;
    rc_dmd dev;
    const rc_dmd_ops *dops = NULL;
    void *dctx = NULL;
    char backend_note[512] = "";
    int on_dev = 0;
    rc_md_params par;
    rc_k_box box;
    rc_rdf rdf;
    rc_md_series ser;
    rc_outfile obs, rdff, msdf, traj, summ;
    rc_h5md *h5 = NULL;
    char h5path[1200] = "";
    double *q = NULL, *p = NULL, *mass = NULL, *radius = NULL;
    double t0, t_last, vol, rmax, tp;
    /* the loop's accumulators (rc_md_loop, checkpointed as one); its
     * wall seconds outside the engine (README: summary.json "seconds"):
     * observables (the rows' reductions, the MSD reference), rdf (the
     * state copied out for g(r) and the histogram), trajectory (the state
     * copied out for frames and the frames), output (writing the rows) */
    long step, k, rdf_every = 1, first_step = 0;
    int d = scn->dimension, n = scn->n, stopped = 0, have_ref = 0;
    rc_status st = RC_OK;
    char message[600] = "";
    double wall_before = 0.0, next_ckpt_time = 0.0, next_ckpt_wall = 0.0;
    rc_md_loop loop;
    rc_md_outs outs;
    rc_outfile h5f;
    rc_md_rdf_job rdf_job;
    int rdf_beside = 0;

    memset(&rdf_job, 0, sizeof rdf_job);
    memset(&res, 0, sizeof res);
    memset(&info, 0, sizeof info);
    memset(&md, 0, sizeof md);
    memset(&dev, 0, sizeof dev);
    memset(&rdf, 0, sizeof rdf);
    memset(&ser, 0, sizeof ser);
    memset(&obs, 0, sizeof obs);
    memset(&rdff, 0, sizeof rdff);
    memset(&msdf, 0, sizeof msdf);
    memset(&traj, 0, sizeof traj);
    memset(&summ, 0, sizeof summ);
    memset(&h5f, 0, sizeof h5f);
    memset(&loop, 0, sizeof loop);
    outs.obs = &obs;
    outs.rdff = &rdff;
    outs.msdf = &msdf;
    outs.traj = &traj;
    outs.h5 = &h5;
    snprintf(res.status, sizeof res.status, "failed");
    res.failure_time = NAN;
    rc_scenario_run_info(scn, &sr);
    if ((st = rc_md_backend(scn, opt->backend, &res.backend, &dops, &dctx,
                            backend_note, sizeof backend_note, err)) !=
        RC_OK)
        goto done;

    q = (double *)malloc(sizeof(double) * (size_t)n * (size_t)d);
    p = (double *)malloc(sizeof(double) * (size_t)n * (size_t)d);
    mass = (double *)malloc(sizeof(double) * (size_t)n);
    radius = (double *)malloc(sizeof(double) * (size_t)n);
    if (!q || !p || !mass || !radius) {
        st = rc_md_err(err, RC_ERR_NOMEM, "out of memory for the particles");
        goto done;
    }
    if ((st = rc_md_initial_(scn, &box, q, p, mass, radius, err)) != RC_OK)
        goto done;
    rc_md_params_(scn, res.backend == RC_BACKEND_REFERENCE ? 1 : opt->threads,
                  &par);
    if ((st = rc_md_init(&md, &box, n, q, p, mass, radius, &par)) != RC_OK) {
        char full[2048];
        snprintf(full, sizeof full, "%s: %s", scn->path, md.msg);
        rc_md_err(err, st, full);
        goto done;
    }
    /* md holds the state from here: the start's copies go (p stays as
     * the frames' velocities) */
    free(q);
    free(mass);
    free(radius);
    q = mass = radius = NULL;
    if (sr.trajectory != RC_TRAJECTORY_H5MD) {
        free(p);
        p = NULL;
    }
    if (res.backend != RC_BACKEND_CUDA)
        rc_dmd_cpu_threads(dctx, par.threads);
    /* dev owns the launcher from here, also when this fails */
    st = rc_dmd_init(&dev, &md, dops, dctx);
    dops = NULL;
    dctx = NULL;
    if (st != RC_OK) {
        rc_md_err(err, st, md.msg);
        goto done;
    }
    on_dev = 1;
    vol = rc_k_box_volume(&box);
    {
        double sv = 0.0;
        for (k = 0; k < n; ++k)
            sv += d == 3 ? 4.0 / 3.0 * M_PI * pow(md.radius[k], 3)
                         : M_PI * md.radius[k] * md.radius[k];
        info.packing_fraction = sv / vol;
    }
    rmax = scn->md.rdf_rmax > 0.0 ? scn->md.rdf_rmax : 5.0 * md.rmax;
    for (k = 0; k < d; ++k)
        if (box.periodic[k] && rmax >= 0.5 * box.L[k])
            rmax = 0.499 * box.L[k];
    if (rc_rdf_init(&rdf, d, scn->md.rdf_bins, rmax) != 0) {
        st = rc_md_err(err, RC_ERR_NOMEM, "out of memory for the rdf");
        goto done;
    }

    if ((st = rc_out_mkdirs(opt->out_dir, err)) != RC_OK)
        goto done;
    /* stale results go first; a restart keeps the .partial files it
     * continues and its checkpoint */
    if ((st = rc_ckpt_clear_stale(opt->out_dir, outputs, opt->restart != NULL,
                                  err)) != RC_OK)
        goto done;
    /* the H5MD file, written by HDF5, is renamed with the others */
    snprintf(h5f.final_path, sizeof h5f.final_path, "%s/trajectory.h5md",
             opt->out_dir);
    snprintf(h5f.partial_path, sizeof h5f.partial_path, "%s.partial",
             h5f.final_path);
    snprintf(h5path, sizeof h5path, "%s", h5f.partial_path);
    h5f.external = sr.trajectory == RC_TRAJECTORY_H5MD;
    if (!h5f.external)
        h5f.final_path[0] = '\0';
    rc_md_energy(&md, &loop.kin0, &loop.pot0, loop.mom0);
    if (opt->restart) {
        if ((st = rc_md_restore(opt, &dev, &md, &loop, &ser, &rdf,
                                &have_ref, &outs,
                                sr.trajectory == RC_TRAJECTORY_XYZ,
                                sr.trajectory == RC_TRAJECTORY_H5MD, h5path,
                                err)) != RC_OK)
            goto done;
        wall_before = loop.wall;
        first_step = md.steps;
        res.steps = first_step;
    } else {
        if ((st = rc_out_open(&obs, opt->out_dir, "observables.csv", err)) ||
            (st = rc_out_open(&rdff, opt->out_dir, "rdf.csv", err)) ||
            (st = rc_out_open(&msdf, opt->out_dir, "msd.csv", err)))
            goto done;
        if (sr.trajectory == RC_TRAJECTORY_XYZ &&
            (st = rc_out_open(&traj, opt->out_dir, "trajectory.xyz", err)))
            goto done;
        if (sr.trajectory == RC_TRAJECTORY_H5MD) {
            char msg[600];
            const char *species_names[1];
            rc_h5md_meta meta;
            int *species = (int *)calloc((size_t)n, sizeof(int));
            int hrc;
            if (!species) {
                st = rc_md_err(err, RC_ERR_NOMEM, "out of memory");
                goto done;
            }
            /* one species (every particle index 0), named output.species */
            species_names[0] = scn->md.species;
            memset(&meta, 0, sizeof meta);
            /* the start's copies are freed once md holds them */
            meta.radius = md.radius;
            meta.mass = md.mass;
            meta.species = species;
            meta.species_names = species_names;
            meta.nspecies = 1;
            meta.version = RICOCHET_VERSION;
            if (scn->md.length_unit[0]) {
                meta.length_unit = scn->md.length_unit;
                meta.time_unit = scn->md.time_unit;
            }
            meta.obs_names = rc_md_h5_obs;
            meta.nobs = RC_MD_H5_NOBS;
            hrc = rc_h5md_create(&h5, h5path, n, d, box.L, box.periodic, 1,
                                 &meta, msg, sizeof msg);
            free(species);
            if (hrc != 0) {
                st = rc_md_err(err, RC_ERR_IO, msg);
                goto done;
            }
        }
        fprintf(obs.f,
                "step,time,temperature,kinetic_energy,potential_energy,"
                "energy,momentum_x,momentum_y,momentum_z,pressure,"
                "pressure_kinetic,pressure_virial,pressure_collision,Z,"
                "collisions,wall_collisions,largest_island,msd,max_overlap\n");
        fprintf(msdf.f, "time,msd\n");
    }
    rc_table_put_(opt->on_table, opt->table_ctx, &rc_table_observables_, 0,
                  NULL);
    rc_table_put_(opt->on_table, opt->table_ctx, &rc_table_msd_, 0, NULL);
    info.equilibrate_steps =
        (long)floor(scn->md.equilibrate / scn->integ.dt + 0.5);
    /* g(r) at equilibrate_steps + k rdf_every, k >= 1 (0: none) */
    rdf_every = scn->md.rdf_every >= 0
                    ? scn->md.rdf_every
                    : rc_md_rdf_every_default(
                          d, n, &box, rmax, 2.0 * md.rmax,
                          sr.steps - info.equilibrate_steps);
    info.rdf_every = rdf_every;
    /* g(r) beside the engine on the GPU (rc_md_rdf_job) */
    {
        const char *e = getenv("RICOCHET_RDF_BESIDE");
        rdf_beside = res.backend == RC_BACKEND_CUDA ||
                     (e && !strcmp(e, "1"));
    }
    info.rdf_beside = rdf_beside;
    rdf_job.rdf = &rdf;
    rdf_job.box = &box;
    rdf_job.n = n;
    rdf_job.d = d;
    rdf_job.threads = par.threads;

    t0 = t_last = rc_now();
    next_ckpt_wall = t0 + scn->checkpoint_wall;
    next_ckpt_time = scn->checkpoint_every;
    if (opt->restart) /* the checkpoint that restarts is not written again */
        rc_ckpt_due(scn, first_step, scn->integ.dt, &next_ckpt_time,
                    &next_ckpt_wall, t0);
    for (step = first_step;; ++step) {
        int last = step == sr.steps, is_row = step % sr.every == 0 || last;
        int frame = (traj.f || h5) && (step % sr.trajectory_every == 0 || last);
        int rdf_now = rdf_every > 0 && step > info.equilibrate_steps &&
                      (step - info.equilibrate_steps) % rdf_every == 0;
        if (step > first_step && !last &&
            rc_ckpt_due(scn, step, scn->integ.dt, &next_ckpt_time,
                        &next_ckpt_wall, rc_now())) {
            tp = rc_md_clock(&md);
            if (rc_md_rdf_wait(&rdf_job) != 0) {
                st = rc_md_err(err, RC_ERR_NOMEM, "out of memory for g(r)");
                break;
            }
            loop.t_rdf += rc_md_clock(&md) - tp;
            loop.wall = wall_before + rc_now() - t0;
            if ((st = rc_md_checkpoint(scn, opt, &dev, &md, &loop, &ser, &rdf,
                                       have_ref, &outs, err)) != RC_OK) {
                snprintf(message, sizeof message, "%.500s", err->message);
                break;
            }
        }
        /* the engine's state reaches md only where the host reads
         * positions (g(r), frames, the MSD reference); its observables
         * are reduced by the launcher */
        tp = rc_md_clock(&md);
        if (step > 0 &&
            (rdf_now || frame || step == info.equilibrate_steps) &&
            (st = rc_dmd_sync(&dev)) != RC_OK) {
            rc_md_err(err, st, md.msg);
            break;
        }
        /* the copy is charged to what needed it, g(r) first */
        if (rdf_now)
            loop.t_rdf += rc_md_clock(&md) - tp;
        else if (frame)
            loop.t_traj += rc_md_clock(&md) - tp;
        else
            loop.t_obs += rc_md_clock(&md) - tp;
        if (step == info.equilibrate_steps) {
            tp = rc_md_clock(&md);
            have_ref = 1;
            if ((st = rc_dmd_set_ref_state(&dev)) != RC_OK) {
                rc_md_err(err, st, md.msg);
                break;
            }
            loop.t_obs += rc_md_clock(&md) - tp;
        }
        if (is_row) {
            double kin, pot, mom[3], T, pk, pc, pv, z, msd = 0.0, dt_row;
            double overlap;
            int a;
            tp = rc_md_clock(&md);
            if ((st = rc_dmd_observe(&dev, &kin, &pot, mom,
                                     step >= info.equilibrate_steps ? &msd
                                                                    : NULL,
                                     &overlap)) != RC_OK) {
                rc_md_err(err, st, md.msg);
                break;
            }
            /* "no overlap" is +0 whatever sign of zero fmax returned
             * (it may differ between launchers and optimisation levels) */
            if (overlap == 0.0)
                overlap = 0.0;
            dt_row = md.time - loop.row_time;
            rc_md_pressure_(&md, kin, loop.row_virial, dt_row, &T, &pk, &pv,
                            &pc, &z);
            loop.max_overlap = fmax(loop.max_overlap, overlap);
            loop.ke_max_dev = fmax(loop.ke_max_dev, fabs(kin + pot - loop.kin0 - loop.pot0));
            for (a = 0; a < 3; ++a)
                loop.p_max_dev = fmax(loop.p_max_dev, fabs(mom[a] - loop.mom0[a]));
            loop.t_obs += rc_md_clock(&md) - tp;
            tp = rc_md_clock(&md);
            fprintf(obs.f,
                    "%ld,%.10g,%.12g,%.17g,%.17g,%.17g,%.6e,%.6e,%.6e,%.10g,"
                    "%.10g,%.10g,%.10g,%.10g,%ld,%ld,%ld,%.10g,%.6e\n",
                    step, md.time, T, kin, pot, kin + pot, mom[0], mom[1],
                    mom[2], pk + pv + pc, pk, pv, pc, z, loop.row_coll,
                    md.total.wall_collisions, md.total.largest_island, msd,
                    overlap);
            rc_table_observables_row_(opt, step, md.time, T, kin, pot, mom,
                                      pk, pv, pc, z, loop.row_coll,
                                      md.total.wall_collisions,
                                      md.total.largest_island, msd, overlap);
            /* the row an H5MD frame's observables come from */
            loop.obs_row[0] = T;
            loop.obs_row[1] = kin;
            loop.obs_row[2] = pot;
            loop.obs_row[3] = kin + pot;
            loop.obs_row[4] = pk + pv + pc;
            loop.obs_row[5] = z;
            loop.obs_row[6] = (double)loop.row_coll; /* exact below 2^53 */
            loop.obs_time = md.time;
            loop.obs_step = step;
            /* averages over the rows after equilibration (the first
             * interval that starts there) */
            if (step > info.equilibrate_steps && dt_row > 0.0) {
                if (rc_md_series_push(&ser, z,
                                      n > 0 ? 2.0 * loop.row_coll / (n * dt_row)
                                            : 0.0,
                                      T) != 0) {
                    st = rc_md_err(err, RC_ERR_NOMEM, "out of memory");
                    break;
                }
                ser.msd_t[ser.n - 1] =
                    md.time - info.equilibrate_steps * scn->integ.dt;
                ser.msd[ser.n - 1] = msd;
                fprintf(msdf.f, "%.10g,%.10g\n", ser.msd_t[ser.n - 1], msd);
                rc_table_msd_row_(opt, ser.msd_t[ser.n - 1], msd);
            }
            loop.row_virial = 0.0;
            loop.row_coll = 0;
            loop.row_time = md.time;
            loop.t_rows += rc_md_clock(&md) - tp;
        }
        if (rdf_now) {
            tp = rc_md_clock(&md);
            /* in line, its positions by cell in the engine's idle
             * scratch; beside the engine that scratch is in use, and
             * rdf.lent stays NULL (rc_rdf_add's own scratch) */
            if (!rdf_beside)
                rdf.lent = rc_dmd_idle(&dev, &rdf.lent_n);
            if (rc_md_rdf_sample(&rdf_job, rdf_beside, md.q) != 0) {
                st = rc_md_err(err, RC_ERR_NOMEM, "out of memory for g(r)");
                break;
            }
            loop.rdf_ok = 1;
            loop.t_rdf += rc_md_clock(&md) - tp;
        }
        tp = rc_md_clock(&md);
        if (traj.f && (step % sr.trajectory_every == 0 || last))
            rc_md_xyz(traj.f, &md, scn->md.species, step);
        if (h5 && (step % sr.trajectory_every == 0 || last)) {
            char msg[600];
            int a;
            /* velocities into p (the initial momenta are no longer
             * needed) */
            for (a = 0; a < n * d; ++a)
                p[a] = md.p[a] * md.inv_mass[a / d];
            if (rc_out_fault_("trajectory.h5md")) { /* fault-injection tests */
                snprintf(msg, sizeof msg, "%.500s: H5Dwrite: No space left "
                                          "on device (injected)", h5path);
                st = rc_md_err(err, RC_ERR_IO, msg);
                break;
            }
            if (rc_h5md_append(h5, step, md.time, md.q, p, md.image, msg,
                               sizeof msg) != 0 ||
                rc_h5md_observe(h5, loop.obs_step, loop.obs_time,
                                loop.obs_row, msg, sizeof msg) != 0) {
                st = rc_md_err(err, RC_ERR_IO, msg);
                break;
            }
        }
        if (frame)
            loop.t_traj += rc_md_clock(&md) - tp;
        if (last)
            break;
        if ((st = rc_dmd_step(&dev)) != RC_OK) {
            snprintf(message, sizeof message, "%s", md.msg);
            res.failure_time = (double)(step + 1) * scn->integ.dt;
            break;
        }
        loop.row_virial += md.step.virial;
        loop.row_coll += md.step.collisions;
        res.steps = step + 1;
        if ((step & 7) == 0 &&
            rc_progress_due(opt, &t_last, step + 1, sr.steps, t0, obs.f,
                            msdf.f)) {
            stopped = 1;
            break;
        }
    }
    /* the sample in flight, before anything reads rdf */
    tp = rc_md_clock(&md);
    if (rc_md_rdf_wait(&rdf_job) != 0 && st == RC_OK)
        st = rc_md_err(err, RC_ERR_NOMEM, "out of memory for g(r)");
    loop.t_rdf += rc_md_clock(&md) - tp;
    info.max_overlap = loop.max_overlap;
    res.wall_seconds = wall_before + rc_now() - t0;
    if (opt->progress && st == RC_OK && !stopped)
        opt->progress(opt->progress_ctx, sr.steps, sr.steps, res.wall_seconds);
    if (stopped) {
        /* a checkpoint at the stop, before rdf.csv is written below */
        rc_error cerr;
        memset(&cerr, 0, sizeof cerr);
        loop.wall = res.wall_seconds;
        snprintf(res.status, sizeof res.status, "interrupted");
        rc_ckpt_stop_message(message, sizeof message, res.steps, sr.steps,
                             opt->out_dir,
                             rc_md_checkpoint(scn, opt, &dev, &md, &loop,
                                              &ser, &rdf, have_ref,
                                              &outs, &cerr),
                             &cerr);
    } else if (st == RC_OK) {
        snprintf(res.status, sizeof res.status, "ok");
    }

    /* means and errors */
    info.z_mean = NAN;
    info.z_err = NAN;
    info.gamma_mean = NAN;
    info.gamma_err = NAN;
    info.diffusion = NAN;
    if (ser.n >= 2) {
        info.z_err = rc_block_stderr(ser.z, ser.n, &info.z_mean, NULL);
        info.gamma_err =
            rc_block_stderr(ser.gamma, ser.n, &info.gamma_mean, NULL);
        /* D from the slope of the second half of the MSD: 2 d D */
        info.diffusion = rc_slope(ser.msd_t + ser.n / 2, ser.msd + ser.n / 2,
                                  ser.n - ser.n / 2) /
                         (2.0 * d);
        {
            double tm = 0.0;
            long a;
            for (a = 0; a < ser.n; ++a)
                tm += ser.temp[a];
            info.temperature = tm / ser.n;
        }
    }
    info.z_reference = rc_md_z_reference(d, info.packing_fraction);
    info.collisions = md.total.collisions;
    info.t_update = md.t_update;
    info.t_broad = md.t_broad;
    info.t_contacts = md.t_contacts;
    info.t_reflect = md.t_reflect;
    info.t_output = res.wall_seconds - md.t_update - md.t_broad -
                    md.t_contacts - md.t_reflect;
    info.t_observables = loop.t_obs;
    info.t_rdf = loop.t_rdf;
    info.t_trajectory = loop.t_traj;
    info.t_rows = loop.t_rows;
    info.t_other = info.t_output - loop.t_obs - loop.t_rdf - loop.t_traj - loop.t_rows;
    info.rdf_samples = rdf.samples;
    info.candidate_builds = md.rebuilds;
    /* state, scratch and lists held by the engine's launcher */
    info.bytes_per_particle = n > 0 ? rc_dmd_bytes(&dev) / n : 0.0;
    info.largest_island = md.total.largest_island;
    info.pgs_islands = md.total.pgs_islands;
    info.pgs_residual = md.total.pgs_residual;
    info.energy_error = (loop.kin0 + loop.pot0) != 0.0
                            ? loop.ke_max_dev / fabs(loop.kin0 + loop.pot0)
                            : loop.ke_max_dev;
    info.momentum_error = loop.p_max_dev;
    info.particle_steps_per_second =
        res.wall_seconds > 0.0 ? (double)n * res.steps / res.wall_seconds
                               : 0.0;
    res.energy_initial = loop.kin0 + loop.pot0;
    res.max_rel_energy_error = info.energy_error;
    res.max_momentum_error = loop.p_max_dev;

    if (loop.rdf_ok)
        rc_rdf_write(&rdf, rdff.f);
    else
        fprintf(rdff.f, "r,g\n");
    rc_table_rdf_rows_(opt, loop.rdf_ok ? &rdf : NULL);

    {
        cJSON *root = cJSON_CreateObject(), *o;
        char *scenario_json = rc_scenario_to_json(scn), *text = NULL;
        rc_error werr;
        rc_status wst = RC_OK;
        memset(&werr, 0, sizeof werr);
        cJSON_AddStringToObject(root, "ricochet_version", RICOCHET_VERSION);
        cJSON_AddStringToObject(root, "scenario_file", scn->path);
        cJSON_AddStringToObject(root, "name", scn->name);
        cJSON_AddStringToObject(root, "status", res.status);
        if (message[0])
            cJSON_AddStringToObject(root, "message", message);
        cJSON_AddStringToObject(root, "method", "gvi (large system)");
        cJSON_AddStringToObject(root, "collision_times",
                                par.exact ? "exact" : "gvi");
        cJSON_AddStringToObject(root, "backend", rc_backend_name(res.backend));
        if (backend_note[0])
            cJSON_AddStringToObject(root, "backend_note", backend_note);
        if (on_dev) {
            o = cJSON_AddObjectToObject(root, "engine");
            cJSON_AddStringToObject(o, "launcher", dev.ops->name);
            /* island rounds that went to the batched or host tiers,
             * and the islands the host tiers solved */
            cJSON_AddNumberToObject(o, "host_tier_rounds",
                                    (double)dev.host_rounds);
            cJSON_AddNumberToObject(o, "host_tier_islands",
                                    (double)dev.host_islands);
            cJSON_AddNumberToObject(o, "candidate_list_builds",
                                    (double)dev.rebuilds);
            /* exact collisions: island rounds run again because an
             * island outgrew its impact log's first room (the price of
             * sizing the logs by use: rc_k_mdx_log_first) */
            if (dev.v.exact)
                cJSON_AddNumberToObject(o, "impact_log_retries",
                                        (double)dev.log_retries);
            /* what crosses to the host, observables and outputs
             * included: launcher calls that queue work (kernels, scans,
             * sorts, reductions, copies) and calls that wait for the
             * launcher (reads, fetches, scan totals, medium batches) */
            cJSON_AddNumberToObject(o, "launches", (double)dev.launches);
            cJSON_AddNumberToObject(o, "host_syncs", (double)dev.syncs);
            cJSON_AddNumberToObject(o, "launches_per_step",
                                    md.steps > 0 ? (double)dev.launches /
                                                       (double)md.steps
                                                 : 0.0);
            cJSON_AddNumberToObject(o, "host_syncs_per_step",
                                    md.steps > 0 ? (double)dev.syncs /
                                                       (double)md.steps
                                                 : 0.0);
        }
        cJSON_AddNumberToObject(root, "threads", par.threads);
        cJSON_AddNumberToObject(root, "dimension", d);
        cJSON_AddNumberToObject(root, "particles", n);
        cJSON_AddItemToObject(root, "box_lengths",
                              cJSON_CreateDoubleArray(box.L, d));
        cJSON_AddNumberToObject(root, "packing_fraction", info.packing_fraction);
        o = cJSON_AddObjectToObject(root, "initial_state");
        rc_md_initial_state_json(o, scn);
        cJSON_AddNumberToObject(root, "dt", scn->integ.dt);
        cJSON_AddNumberToObject(root, "steps", (double)res.steps);
        cJSON_AddNumberToObject(root, "equilibrate", scn->md.equilibrate);
        cJSON_AddNumberToObject(root, "rows_averaged", (double)ser.n);
        /* steps between g(r) samples (given or the default) */
        cJSON_AddNumberToObject(root, "rdf_every", (double)info.rdf_every);
        cJSON_AddNumberToObject(root, "rdf_samples",
                                (double)info.rdf_samples);
        /* g(r) taken by a host thread while the engine steps (the GPU
         * backend): seconds.rdf is then the loop's wait for it */
        cJSON_AddBoolToObject(root, "rdf_beside_engine", info.rdf_beside);
        o = cJSON_AddObjectToObject(root, "compressibility_factor");
        rc_json_num(o, "mean", info.z_mean);
        rc_json_num(o, "stderr", info.z_err);
        int mono = 1;
        for (k = 1; k < n && md.radius; ++k)
            mono &= md.radius[k] == md.radius[0];
        if (mono && !par.has_pair && par.gravity[0] == 0.0 &&
            par.gravity[1] == 0.0 && par.gravity[2] == 0.0)
            /* the equation of state of equal hard spheres */
            rc_json_num(o, d == 3 ? "carnahan_starling" : "henderson",
                        info.z_reference);
        cJSON_AddStringToObject(
            o, "note",
            par.exact ? "exact collision times: impacts at their times "
                        "within the step, so Z carries no dt bias"
                      : "GVI reflects at the start of the step in which a "
                        "pair would touch, so Z carries an O(dt) bias: "
                        "extrapolate over dt (or collisions: exact)");
        o = cJSON_AddObjectToObject(root, "collision_rate_per_particle");
        rc_json_num(o, "mean", info.gamma_mean);
        rc_json_num(o, "stderr", info.gamma_err);
        rc_json_num(root, "mean_temperature", info.temperature);
        rc_json_num(root, "diffusion_coefficient", info.diffusion);
        cJSON_AddNumberToObject(root, "collisions", (double)info.collisions);
        cJSON_AddNumberToObject(root, "wall_collisions",
                                (double)md.total.wall_collisions);
        cJSON_AddNumberToObject(root, "largest_island",
                                (double)info.largest_island);
        cJSON_AddNumberToObject(root, "islands_lapack_tier",
                                (double)md.total.lapack_islands);
        cJSON_AddNumberToObject(root, "islands_sparse_tier",
                                (double)info.pgs_islands);
        cJSON_AddNumberToObject(root, "sparse_tier_tolerance", par.pgs_tol);
        cJSON_AddNumberToObject(root, "sparse_tier_worst_residual",
                                info.pgs_residual);
        cJSON_AddNumberToObject(root, "max_rel_energy_error",
                                info.energy_error);
        cJSON_AddNumberToObject(root, "max_momentum_error",
                                info.momentum_error);
        cJSON_AddNumberToObject(root, "max_overlap", info.max_overlap);
        cJSON_AddNumberToObject(root, "held_contacts", (double)md.total.held);
        cJSON_AddNumberToObject(root, "wall_seconds", res.wall_seconds);
        cJSON_AddNumberToObject(root, "particle_steps_per_second",
                                info.particle_steps_per_second);
        o = cJSON_AddObjectToObject(root, "seconds");
        cJSON_AddNumberToObject(o, "predictor_and_update", info.t_update);
        cJSON_AddNumberToObject(o, "broadphase", info.t_broad);
        cJSON_AddNumberToObject(o, "contacts_and_islands", info.t_contacts);
        cJSON_AddNumberToObject(o, "reflections", info.t_reflect);
        /* everything outside the four engine phases (= observables +
         * rdf + trajectory + output + other) */
        cJSON_AddNumberToObject(o, "observables_and_output", info.t_output);
        cJSON_AddNumberToObject(o, "observables", info.t_observables);
        cJSON_AddNumberToObject(o, "rdf", info.t_rdf);
        cJSON_AddNumberToObject(o, "trajectory", info.t_trajectory);
        cJSON_AddNumberToObject(o, "output", info.t_rows);
        /* the loop's own work, the engine's outside its phases, progress
         * reports */
        cJSON_AddNumberToObject(o, "other", info.t_other);
        cJSON_AddNumberToObject(root, "candidate_list_builds",
                                (double)info.candidate_builds);
        cJSON_AddNumberToObject(root, "engine_bytes_per_particle",
                                info.bytes_per_particle);
        if (scenario_json) {
            cJSON *echo = cJSON_Parse(scenario_json);
            if (echo)
                cJSON_AddItemToObject(root, "scenario", echo);
        }
        text = cJSON_Print(root);
        wst = rc_out_open(&summ, opt->out_dir, "summary.json", &werr);
        if (wst == RC_OK && text)
            fprintf(summ.f, "%s\n", text);
        free(text);
        free(scenario_json);
        cJSON_Delete(root);
        if (st == RC_OK && !stopped) {
            rc_outfile *all[6];
            char msg[600];
            /* HDF5 closes its file before the renames */
            if (h5 && rc_h5md_close(h5, msg, sizeof msg) != 0 &&
                wst == RC_OK) {
                wst = rc_md_err(&werr, RC_ERR_IO, msg);
            }
            h5 = NULL;
            all[0] = &obs;
            all[1] = &rdff;
            all[2] = &msdf;
            all[3] = &traj;
            all[4] = &h5f;
            all[5] = &summ;
            if (wst == RC_OK)
                wst = rc_out_commit_all(all, 6, &werr);
            if (wst == RC_OK)
                rc_out_remove_stale(opt->out_dir, RC_CKPT_NAME, &werr);
            if (wst != RC_OK) {
                *err = werr;
                st = wst;
                snprintf(res.status, sizeof res.status, "failed");
            }
        } else if (st == RC_OK) {
            st = rc_md_err(err, RC_ERR_STATE, message);
        } else if (!err->message[0]) {
            rc_md_err(err, st, message[0] ? message : rc_status_str(st));
        }
    }
done:
    if (h5) {
        char msg[600];
        if (rc_h5md_close(h5, msg, sizeof msg) != 0 && st == RC_OK)
            st = rc_md_err(err, RC_ERR_IO, msg);
    }
    rc_out_abandon(&obs);
    rc_out_abandon(&rdff);
    rc_out_abandon(&msdf);
    rc_out_abandon(&traj);
    rc_out_abandon(&summ);
    if (on_dev)
        rc_dmd_free(&dev);
    else if (dops)
        dops->destroy(dctx);
    rc_md_free(&md);
    rc_md_rdf_wait(&rdf_job); /* a path that left the loop early */
    free(rdf_job.q);
    rc_rdf_free(&rdf);
    free(ser.z);
    free(ser.gamma);
    free(ser.temp);
    free(ser.msd_t);
    free(ser.msd);
    free(q);
    free(p);
    free(mass);
    free(radius);
    if (info_out)
        *info_out = info;
    if (result)
        *result = res;
    return st;
}
