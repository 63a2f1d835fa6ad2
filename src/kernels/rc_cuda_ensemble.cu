/* GPU ensemble engine: one thread per member, the kernel body of the
 * CPU batch engine (rc_k_member_run, src/kernels/rc_member.h).
 *
 * Only launch plumbing lives here: the grid-stride wrapper, the launch
 * configuration (from src/host/launch.c) and device memory.  The
 * members of a call are cut into chunks whose device workspace fits a
 * budget; two chunk buffers (slots) with a stream each let one chunk's
 * copies overlap the other's kernel.  Host staging is pinned, so the
 * copies are asynchronous.  Every CUDA call is checked and turned into
 * an rc_status with the file, line and call.
 *
 * Bytes moved per member: 2N doubles in, sizeof(rc_k_member_out) out
 * (and 2N doubles out when final states are asked for); the work is
 * `steps` GVI steps, so a launch is compute-bound for any N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "rc_cuda_ensemble.h"
#include "rc_gvi_lanes.h"
#include "rc_member.h"
#include "host/lanes_drive.h"
#include "host/launch.h"

#include "rc_cuda_try.h"

/* Monotonic wall-clock seconds (the lane path's phase times). */
static double rc_cuda_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Threads a block: members branch apart (active sets, reflections,
 * Newton), so small blocks keep a stalled warp from holding many. */
#define RC_MEMBER_BLOCK 128
/* Blocks a multiprocessor must be able to hold (__launch_bounds__): the
 * register budget it implies (65536 / (RC_MEMBER_BLOCK x this)) is what
 * ptxas may use, so the occupancy the chunking reads back
 * (cudaOccupancyMaxActiveBlocksPerMultiprocessor) is at least this.  The
 * member kernel needs 254-255 registers: 2 blocks of 128 (12.5 % of an
 * H100's threads).  3 blocks (sm_90: 168 registers) spills 168 bytes;
 * without a GPU to measure whether the occupancy pays for the spills,
 * the bound stays at what fits without them.  Fewer
 * registers need a smaller live set (the ensemble-speed issue's
 * restructuring), not a tighter bound. */
#define RC_MEMBER_MIN_BLOCKS 2
/* Per-thread scratch in local memory, used when a member's work fits
 * (pogo stick 59 doubles and 11 ints, cart-pendulum 252 and 33, a 5-ball
 * cradle 1824 and 135).  CUDA lays local memory out so that
 * the same offset of consecutive threads is consecutive words: a warp's
 * 32 members touching the same scratch entry read one coalesced line,
 * where blocks of j * wd doubles in one global array put them 32 lines
 * apart.  Local memory also exists only for resident threads, so its
 * footprint is the device's resident threads times the frame, not the
 * chunk's members times the work.  Larger members use the global
 * blocks (stats.local_scratch, ensemble.json's engine.gpu.scratch). */
#define RC_MEMBER_LOCAL_DOUBLES 2048
#define RC_MEMBER_LOCAL_INTS 256

/* Grid-stride over the B members of a chunk.  Member j's scratch (its
 * GVI work, then its gathered q, p: 2N doubles; wd doubles and wi ints)
 * is the thread's local buffers when `local`, else the block at j * wd
 * doubles of `scratch` and j * wi ints of `iscratch`; its state is
 * column j of the structure-of-arrays Q, P (coordinate c at c*B + j).
 * rec (NULL for none): member j records q at its rows from
 * rec + j * rows * N. */
__global__ void __launch_bounds__(RC_MEMBER_BLOCK, RC_MEMBER_MIN_BLOCKS)
rc_g_member_run(rc_k_gvi g, double eps_g, double eps_v, double *Q, double *P,
                long B, long steps, long every, long rows, double dt,
                double *scratch, int *iscratch, long wd, long wi, int local,
                rc_k_member_out *out, double *rec)
{
    double lbuf[RC_MEMBER_LOCAL_DOUBLES];
    int libuf[RC_MEMBER_LOCAL_INTS];
    long j, k, stride = (long)blockDim.x * gridDim.x;
    for (j = (long)blockIdx.x * blockDim.x + threadIdx.x; j < B;
         j += stride) {
        rc_k_gvi_work w;
        rc_k_member_out o;
        double *d = local ? lbuf : scratch + j * wd;
        int *iw = local ? libuf : iscratch + j * wi;
        double *q = d + (wd - 2L * g.N), *p = q + g.N;
        if (local) {
            /* zeroed as the global blocks and the CPU engine's are */
            for (k = 0; k < wd; ++k)
                lbuf[k] = 0.0;
            for (k = 0; k < wi; ++k)
                libuf[k] = 0;
        }
        rc_k_gvi_work_carve(&w, g.N, g.ncon, g.neq, d, iw);
        rc_k_member_run_rec(g, eps_g, eps_v, &w, q, p, Q, P, B, j, steps,
                            every, rows, dt, &o,
                            rec ? rec + j * rows * g.N : (double *)0);
        out[j] = o;
    }
}

/* One chunk buffer: device workspace of `cap` members, pinned staging,
 * a stream, and the chunk in flight (count 0: none). */
typedef struct rc_cuda_slot {
    cudaStream_t stream;
    int has_stream;
    double *d_state;        /* [2 N cap]: Q then P, stride = chunk count */
    double *d_scratch;      /* [cap * wd] */
    int *d_iscratch;        /* [cap * wi] */
    rc_k_member_out *d_out; /* [cap] */
    double *d_rec;          /* [cap * rows * N] with job->qrec, else NULL */
    double *h_state;        /* pinned [2 N cap] */
    rc_k_member_out *h_out; /* pinned [cap] */
    long first, count;
} rc_cuda_slot;

static size_t rc_align256(size_t x)
{
    return (x + 255u) & ~(size_t)255u;
}

/* The chunk's states from the caller's columns into the pinned staging
 * (structure-of-arrays with the chunk's own stride). */
static void rc_slot_pack(const rc_cuda_member_job *job, rc_cuda_slot *s)
{
    int c, N = job->view.N;
    size_t bytes = (size_t)s->count * sizeof(double);
    for (c = 0; c < N; ++c) {
        memcpy(s->h_state + (long)c * s->count,
               job->Q0 + (long)c * job->members + s->first, bytes);
        memcpy(s->h_state + (long)(N + c) * s->count,
               job->P0 + (long)c * job->members + s->first, bytes);
    }
}

/* The finished chunk's outputs (and final states) to the caller. */
static void rc_slot_unpack(const rc_cuda_member_job *job, rc_cuda_slot *s)
{
    int c, N = job->view.N;
    size_t bytes = (size_t)s->count * sizeof(double);
    memcpy(job->out + s->first, s->h_out,
           (size_t)s->count * sizeof(rc_k_member_out));
    for (c = 0; job->Q && c < N; ++c)
        memcpy(job->Q + (long)c * job->members + s->first,
               s->h_state + (long)c * s->count, bytes);
    for (c = 0; job->P && c < N; ++c)
        memcpy(job->P + (long)c * job->members + s->first,
               s->h_state + (long)(N + c) * s->count, bytes);
    s->count = 0;
}

/* The model of view h in one device allocation: every array carved at
 * 256-byte offsets from *d_model (and its host image *h_model, to be
 * copied up on a stream by the caller), the device view *dg pointing
 * into it.  The caller frees both. */
static rc_status rc_cuda_model_alloc(const rc_k_gvi *h, rc_k_gvi *dg,
                                     unsigned char **h_model,
                                     unsigned char **d_model,
                                     size_t *model_bytes, char *why,
                                     size_t why_size)
{
    rc_status st = RC_OK;
    size_t off[10], size[10];
    const void *src[10];
    int np = 0, k, N = h->N;
    *model_bytes = 0;
    src[np] = h->m.mass;       size[np++] = (size_t)h->m.n * sizeof(double);
    src[np] = h->m.inv_mass;   size[np++] = (size_t)h->m.n * sizeof(double);
    src[np] = h->m.radius;     size[np++] = (size_t)h->m.n * sizeof(double);
    src[np] = h->m.pot;        size[np++] = (size_t)h->m.npot * sizeof(rc_k_potential);
    src[np] = h->con;          size[np++] = (size_t)h->ncon * sizeof(rc_k_constraint);
    src[np] = h->mass_c;       size[np++] = (size_t)N * sizeof(double);
    src[np] = h->inv_mass_c;   size[np++] = (size_t)N * sizeof(double);
    src[np] = h->ineq;         size[np++] = (size_t)h->nineq * sizeof(int);
    src[np] = h->eq;           size[np++] = (size_t)h->neq * sizeof(int);
    src[np] = h->q0;           size[np++] = h->q0 ? (size_t)N * sizeof(double) : 0;
    for (k = 0; k < np; ++k) {
        if (!src[k])
            size[k] = 0;
        off[k] = *model_bytes;
        *model_bytes += rc_align256(size[k]);
    }
    *h_model = (unsigned char *)calloc(*model_bytes + 1, 1);
    if (!*h_model) {
        if (why && why_size)
            snprintf(why, why_size, "out of host memory for the model");
        return RC_ERR_NOMEM;
    }
    for (k = 0; k < np; ++k)
        if (size[k])
            memcpy(*h_model + off[k], src[k], size[k]);
    RC_CUDA_TRY(cudaMalloc((void **)d_model, *model_bytes + 256));
    *dg = *h;
#define RC_DEV(k, type) (size[k] ? (type)(*d_model + off[k]) : (type)0)
    dg->m.mass = RC_DEV(0, const double *);
    dg->m.inv_mass = RC_DEV(1, const double *);
    dg->m.radius = RC_DEV(2, const double *);
    dg->m.pot = RC_DEV(3, const rc_k_potential *);
    dg->con = RC_DEV(4, const rc_k_constraint *);
    dg->mass_c = RC_DEV(5, const double *);
    dg->inv_mass_c = RC_DEV(6, const double *);
    dg->ineq = RC_DEV(7, const int *);
    dg->eq = RC_DEV(8, const int *);
    dg->q0 = RC_DEV(9, const double *);
#undef RC_DEV
done:
    return st;
}

extern "C" rc_status rc_cuda_member_prepare(char *why, size_t why_size)
{
    rc_status st = RC_OK;
    cudaFuncAttributes attr;
    RC_CUDA_TRY(cudaFree(0)); /* the context */
    RC_CUDA_TRY(cudaFuncGetAttributes(&attr, rc_g_member_run));
done:
    if (st != RC_OK)
        cudaGetLastError();
    return st;
}

extern "C" rc_status rc_cuda_member_run(const rc_cuda_member_job *job,
                                        rc_cuda_member_stats *stats,
                                        char *why, size_t why_size)
{
    rc_status st = RC_OK;
    const rc_k_gvi *h;
    rc_k_gvi dg;
    rc_launch_workspace ws;
    rc_launch_chunking ch;
    rc_cuda_slot slot[2];
    rc_cuda_member_stats info;
    cudaDeviceProp prop;
    cudaFuncAttributes attr;
    unsigned char *h_model = NULL, *d_model = NULL;
    size_t freeb = 0, totalb = 0, model_bytes = 0;
    long budget, cap, k, member_bytes, waves_cap;
    int N, nslot = 1, s, dev = 0, per_sm = 0, grid = 0, local;
    memset(slot, 0, sizeof slot);
    memset(&info, 0, sizeof info);
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!job || job->members < 0 || !job->Q0 || !job->P0 || !job->out ||
        job->every < 1 ||
        rc_launch_member_workspace(job->view.N, job->view.ncon,
                                   job->view.neq, &ws) != RC_OK) {
        if (why && why_size)
            snprintf(why, why_size, "rc_cuda_member_run: bad arguments");
        return RC_ERR_INVALID;
    }
    h = &job->view;
    dg = *h;
    N = h->N;
    if (job->members == 0)
        return RC_OK;

    RC_CUDA_TRY(cudaGetDevice(&dev));
    RC_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    snprintf(info.device, sizeof info.device, "%s", prop.name);
    RC_CUDA_TRY(cudaFuncGetAttributes(&attr, rc_g_member_run));
    /* the scratch in local memory when it fits (coalesced; nothing to
     * allocate per member), else global blocks */
    local = ws.doubles <= RC_MEMBER_LOCAL_DOUBLES &&
            ws.ints <= RC_MEMBER_LOCAL_INTS;
    member_bytes = local ? ws.state_bytes : ws.bytes;
    if (job->qrec) /* the record of its rows */
        member_bytes += job->rows * N * (long)sizeof(double);

    /* Occupancy: the blocks a multiprocessor really keeps resident for
     * this kernel (registers, local frame), and so the threads of one
     * wave of the whole device. */
    RC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, rc_g_member_run, RC_MEMBER_BLOCK, 0));
    if (per_sm < 1)
        per_sm = 1;
    info.registers = attr.numRegs;
    info.local_bytes = (long)attr.localSizeBytes;
    info.blocks_per_sm = per_sm;
    info.resident = (long)prop.multiProcessorCount * per_sm * RC_MEMBER_BLOCK;
    info.local_scratch = local;

    /* The model: every array of the view in one allocation on the
     * device (rc_cuda_model_up); uploaded below, once the streams exist */
    st = rc_cuda_model_alloc(h, &dg, &h_model, &d_model, &model_bytes, why,
                             why_size);
    if (st != RC_OK)
        goto done;

    /* Chunks: against the budget with one slot; when that takes more
     * than one launch, two slots of half the budget each; either way cut
     * at whole waves of the resident threads (one grid-stride pass per
     * wave, none of them partial but the call's last). */
    RC_CUDA_TRY(cudaMemGetInfo(&freeb, &totalb));
    budget = job->budget_bytes > 0 ? job->budget_bytes : (long)(freeb / 2);
    cap = job->max_chunk > 0 ? job->max_chunk : RC_CUDA_MEMBER_CHUNK;
    st = rc_launch_chunks(job->members, member_bytes, budget, cap, &ch);
    if (st == RC_OK && ch.count > 1 &&
        rc_launch_chunks(job->members, member_bytes, budget / 2, cap, &ch) ==
            RC_OK)
        nslot = 2;
    else if (st == RC_OK && ch.count > 1)
        rc_launch_chunks(job->members, member_bytes, budget, cap, &ch);
    if (st == RC_OK && ch.count > 1 &&
        rc_launch_wave_cap(info.resident, ch.size, &waves_cap) == RC_OK)
        rc_launch_chunks(job->members, member_bytes,
                         nslot == 2 ? budget / 2 : budget, waves_cap, &ch);
    if (st != RC_OK) {
        if (why && why_size)
            snprintf(why, why_size,
                     "one member needs %ld bytes of device memory, more than "
                     "the %ld bytes available to it",
                     member_bytes, budget);
        goto done;
    }

    /* Grid: the blocks the device keeps resident, at most. */
    info.block = RC_MEMBER_BLOCK;
    rc_launch_grid(ch.size, RC_MEMBER_BLOCK, prop.multiProcessorCount * per_sm,
                   &info.grid);
    info.chunks = ch.count;
    info.chunk_size = ch.size;
    info.waves = (ch.size + info.resident - 1) / info.resident;
    info.slots = nslot;
    info.bytes_per_member = member_bytes;

    for (s = 0; s < nslot; ++s) {
        rc_cuda_slot *sl = &slot[s];
        size_t ns = 2u * (size_t)N * (size_t)ch.size;
        size_t nd = local ? 1u : (size_t)ch.size * (size_t)ws.doubles;
        size_t ni = local ? 1u : (size_t)ch.size * (size_t)ws.ints;
        RC_CUDA_TRY(cudaStreamCreateWithFlags(&sl->stream,
                                              cudaStreamNonBlocking));
        sl->has_stream = 1;
        RC_CUDA_TRY(cudaMalloc((void **)&sl->d_state, ns * sizeof(double)));
        RC_CUDA_TRY(cudaMalloc((void **)&sl->d_scratch, nd * sizeof(double)));
        RC_CUDA_TRY(cudaMalloc((void **)&sl->d_iscratch,
                               ni * sizeof(int) + sizeof(int)));
        RC_CUDA_TRY(cudaMalloc((void **)&sl->d_out, (size_t)ch.size *
                                                        sizeof(rc_k_member_out)));
        /* zeroed once, as the CPU engine's calloc'd block: the body does
         * not read scratch it has not written, and memcheck agrees */
        RC_CUDA_TRY(cudaMemsetAsync(sl->d_scratch, 0, nd * sizeof(double),
                                    sl->stream));
        RC_CUDA_TRY(cudaMemsetAsync(sl->d_iscratch, 0, ni * sizeof(int),
                                    sl->stream));
        /* the records' padding is never written, and it is copied back
         * with them (compute-sanitizer initcheck) */
        RC_CUDA_TRY(cudaMemsetAsync(sl->d_out, 0,
                                    (size_t)ch.size * sizeof(rc_k_member_out),
                                    sl->stream));
        if (job->qrec) {
            /* zeroed: a member that fails leaves rows unwritten, and
             * they are copied back with the rest (initcheck) */
            size_t nr = (size_t)ch.size * (size_t)job->rows * (size_t)N;
            RC_CUDA_TRY(cudaMalloc((void **)&sl->d_rec, nr * sizeof(double)));
            RC_CUDA_TRY(cudaMemsetAsync(sl->d_rec, 0, nr * sizeof(double),
                                        sl->stream));
        }
        RC_CUDA_TRY(cudaMallocHost((void **)&sl->h_state, ns * sizeof(double)));
        RC_CUDA_TRY(cudaMallocHost((void **)&sl->h_out, (size_t)ch.size *
                                                            sizeof(rc_k_member_out)));
    }
    /* The model up on the first slot's stream, and complete before any
     * kernel is queued on either stream: a copy on the legacy stream
     * would be ordered against the non-blocking streams by accident
     * only. */
    RC_CUDA_TRY(cudaMemcpyAsync(d_model, h_model, model_bytes,
                                cudaMemcpyHostToDevice, slot[0].stream));
    RC_CUDA_TRY(cudaStreamSynchronize(slot[0].stream));

    /* Chunk k runs in slot k % nslot; before the slot takes it, the
     * slot's previous chunk (k - nslot) is waited for and handed back. */
    for (k = 0; k < ch.count; ++k) {
        rc_cuda_slot *sl = &slot[k % nslot];
        long cnt;
        size_t nb;
        if (sl->count > 0) {
            RC_CUDA_TRY(cudaStreamSynchronize(sl->stream));
            rc_slot_unpack(job, sl);
        }
        rc_launch_chunk_range(&ch, k, &sl->first, &cnt);
        sl->count = cnt;
        nb = 2u * (size_t)N * (size_t)cnt * sizeof(double);
        rc_slot_pack(job, sl);
        RC_CUDA_TRY(cudaMemcpyAsync(sl->d_state, sl->h_state, nb,
                                    cudaMemcpyHostToDevice, sl->stream));
        rc_launch_grid(cnt, RC_MEMBER_BLOCK, prop.multiProcessorCount * per_sm,
                       &grid);
        rc_g_member_run<<<grid, RC_MEMBER_BLOCK, 0, sl->stream>>>(
            dg, job->eps_g, job->eps_v, sl->d_state,
            sl->d_state + (long)N * cnt, cnt, job->steps, job->every,
            job->rows, job->dt, sl->d_scratch, sl->d_iscratch, ws.doubles,
            ws.ints, local, sl->d_out, sl->d_rec);
        RC_CUDA_TRY(cudaGetLastError());
        if (job->qrec) /* member-major: the chunk's records are one block */
            RC_CUDA_TRY(cudaMemcpyAsync(
                job->qrec + sl->first * job->rows * N, sl->d_rec,
                (size_t)cnt * (size_t)job->rows * (size_t)N * sizeof(double),
                cudaMemcpyDeviceToHost, sl->stream));
        RC_CUDA_TRY(cudaMemcpyAsync(sl->h_out, sl->d_out,
                                    (size_t)cnt * sizeof(rc_k_member_out),
                                    cudaMemcpyDeviceToHost, sl->stream));
        if (job->Q || job->P)
            RC_CUDA_TRY(cudaMemcpyAsync(sl->h_state, sl->d_state, nb,
                                        cudaMemcpyDeviceToHost, sl->stream));
    }
    /* the last chunks, still in flight */
    for (k = ch.count > nslot ? ch.count - nslot : 0; k < ch.count; ++k) {
        rc_cuda_slot *sl = &slot[k % nslot];
        RC_CUDA_TRY(cudaStreamSynchronize(sl->stream));
        rc_slot_unpack(job, sl);
    }
    if (stats)
        *stats = info;
done:
    if (st != RC_OK)
        cudaGetLastError(); /* clear a non-sticky error for later calls */
    for (s = 0; s < 2; ++s) {
        rc_cuda_slot *sl = &slot[s];
        if (sl->has_stream) {
            /* nothing may still be copying into memory freed below; the
             * error, if any, was reported by the call that failed */
            cudaStreamSynchronize(sl->stream);
            cudaStreamDestroy(sl->stream);
        }
        cudaFree(sl->d_state);
        cudaFree(sl->d_scratch);
        cudaFree(sl->d_iscratch);
        cudaFree(sl->d_out);
        cudaFree(sl->d_rec);
        if (sl->h_state)
            cudaFreeHost(sl->h_state);
        if (sl->h_out)
            cudaFreeHost(sl->h_out);
    }
    cudaFree(d_model);
    free(h_model);
    if (st != RC_OK)
        cudaGetLastError();
    return st;
}

/* ------------------------------------------------------------------ */
/* The lane path on the GPU: the orchestration of the CPU's lane path
 * (rc_lanes_drive, src/host/lanes_drive.h) over these kernels, one
 * thread a lane, the lane arrays structure-of-arrays over the chunk's
 * members (coordinate c of lane l at c*B + l: a warp's 32 lanes read one
 * line).  The common case of a step runs in rc_g_lanes_fast, the same
 * code for every thread of a warp but for the single-term reflection;
 * the lanes that need the scalar body are appended to a list there and
 * stepped by rc_g_lanes_slow, whose registers (the whole GVI body) do
 * not weigh on the fast kernel's occupancy. */

/* Fast kernels: registers for 4 resident blocks of 128 (at most 128 a
 * thread); the slow kernel as the member kernel. */
#define RC_LANES_FAST_MIN_BLOCKS 4

__global__ void __launch_bounds__(RC_MEMBER_BLOCK, RC_LANES_FAST_MIN_BLOCKS)
rc_g_lanes_start(rc_k_gvi g, int d, long B, rc_k_lanes s)
{
    long l, stride = (long)blockDim.x * gridDim.x;
    for (l = (long)blockIdx.x * blockDim.x + threadIdx.x; l < B; l += stride)
        rc_k_lanes_terms(g.m, d, s.q, B, s.g, (double *)0, l, l + 1);
}

__global__ void __launch_bounds__(RC_MEMBER_BLOCK, RC_LANES_FAST_MIN_BLOCKS)
rc_g_lanes_row(rc_k_gvi g, int d, long B, rc_k_lanes s, rc_k_lanes_stats st,
               int first, double time, long wslot)
{
    long l, stride = (long)blockDim.x * gridDim.x;
    for (l = (long)blockIdx.x * blockDim.x + threadIdx.x; l < B; l += stride)
        rc_k_lanes_row(g.m, d, B, s.q, s.p, &st, first, time, wslot, l,
                       l + 1);
}

/* Screen, the single-term reflection where the lane has one (else p^+ =
 * p), kick; a live SLOW lane onto the list (its order does not matter:
 * members are independent), any other lane's counters of the step now
 * (they read only the lane, and its step is done). */
__global__ void __launch_bounds__(RC_MEMBER_BLOCK, RC_LANES_FAST_MIN_BLOCKS)
rc_g_lanes_fast(rc_k_gvi g, int d, long B, rc_k_lanes s, rc_k_lanes_stats st,
                long step, int *list, int *count)
{
    long l, stride = (long)blockDim.x * gridDim.x;
    for (l = (long)blockIdx.x * blockDim.x + threadIdx.x; l < B; l += stride)
        if (rc_k_lanes_fast_one(&g, d, B, &s, st.live, l))
            list[atomicAdd(count, 1)] = (int)l;
        else
            rc_k_lanes_counters(&s, &st, step, l, l + 1);
}

/* The listed lanes by the scalar body, the scratch in local memory
 * (interleaved across a warp's threads by the hardware), then their
 * counters.  Most steps list few lanes or none: a thread without one
 * returns before zeroing its scratch (which every resident thread did
 * before, in every step).  `count` is
 * this step's list length; `next` the next step's, zeroed here for the
 * next fast kernel (stream order: this kernel is done before it runs). */
__global__ void __launch_bounds__(RC_MEMBER_BLOCK, RC_MEMBER_MIN_BLOCKS)
rc_g_lanes_slow(rc_k_gvi g, long B, rc_k_lanes s, rc_k_lanes_stats st,
                long step, const int *list, const int *count, int *next,
                long wd, long wi)
{
    double lbuf[RC_MEMBER_LOCAL_DOUBLES];
    int libuf[RC_MEMBER_LOCAL_INTS];
    long i, k, stride = (long)blockDim.x * gridDim.x, n = *count;
    long first = (long)blockIdx.x * blockDim.x + threadIdx.x;
    rc_k_gvi_work w;
    double *qs = lbuf + wd, *ps = qs + g.N, *gs = ps + g.N;
    if (first == 0)
        *next = 0;
    if (first >= n)
        return;
    for (k = 0; k < wd + 3L * g.N; ++k)
        lbuf[k] = 0.0;
    for (k = 0; k < wi; ++k)
        libuf[k] = 0;
    rc_k_gvi_work_carve(&w, g.N, g.ncon, g.neq, lbuf, libuf);
    for (i = first; i < n; i += stride) {
        long l = list[i];
        if (!rc_k_lanes_slow_step(g, B, &s, &w, qs, ps, gs, l,
                                  &st.impacts[l]))
            st.live[l] = 0;
        rc_k_lanes_counters(&s, &st, step, l, l + 1);
    }
}

/* The launcher's context for rc_lanes_drive: the chunk's device arrays
 * and the stream; the first launch error is kept. */
typedef struct rc_cuda_lanes_ctx {
    rc_k_gvi g;         /* device view */
    int d;
    long B, wd, wi;
    rc_k_lanes s;       /* device pointers */
    rc_k_lanes_stats st;
    int *list, *count; /* count[step % 2]: the list's length at step */
    int grid;
    cudaStream_t stream;
    char *why;
    size_t why_size;
} rc_cuda_lanes_ctx;

static int rc_cuda_lanes_check(rc_cuda_lanes_ctx *c, const char *kernel)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return 0;
    if (c->why && c->why_size)
        snprintf(c->why, c->why_size, "%s: %s", kernel,
                 cudaGetErrorString(e));
    return 1;
}

static int rc_cuda_lanes_start_op(void *ctx)
{
    rc_cuda_lanes_ctx *c = (rc_cuda_lanes_ctx *)ctx;
    rc_g_lanes_start<<<c->grid, RC_MEMBER_BLOCK, 0, c->stream>>>(c->g, c->d,
                                                                 c->B, c->s);
    return rc_cuda_lanes_check(c, "rc_g_lanes_start");
}

static int rc_cuda_lanes_row_op(void *ctx, int first, double time,
                                long wslot)
{
    rc_cuda_lanes_ctx *c = (rc_cuda_lanes_ctx *)ctx;
    rc_g_lanes_row<<<c->grid, RC_MEMBER_BLOCK, 0, c->stream>>>(
        c->g, c->d, c->B, c->s, c->st, first, time, wslot);
    return rc_cuda_lanes_check(c, "rc_g_lanes_row");
}

static int rc_cuda_lanes_fast_op(void *ctx, long step)
{
    rc_cuda_lanes_ctx *c = (rc_cuda_lanes_ctx *)ctx;
    rc_g_lanes_fast<<<c->grid, RC_MEMBER_BLOCK, 0, c->stream>>>(
        c->g, c->d, c->B, c->s, c->st, step, c->list, c->count + step % 2);
    return rc_cuda_lanes_check(c, "rc_g_lanes_fast");
}

static int rc_cuda_lanes_slow_op(void *ctx, long step)
{
    rc_cuda_lanes_ctx *c = (rc_cuda_lanes_ctx *)ctx;
    rc_g_lanes_slow<<<c->grid, RC_MEMBER_BLOCK, 0, c->stream>>>(
        c->g, c->B, c->s, c->st, step, c->list, c->count + step % 2,
        c->count + (step + 1) % 2, c->wd, c->wi);
    return rc_cuda_lanes_check(c, "rc_g_lanes_slow");
}

static int rc_cuda_lanes_swap_op(void *ctx)
{
    rc_k_lanes_swap(&((rc_cuda_lanes_ctx *)ctx)->s);
    return 0;
}

static const rc_lanes_ops rc_cuda_lanes_ops = {
    rc_cuda_lanes_start_op, rc_cuda_lanes_row_op, rc_cuda_lanes_fast_op,
    rc_cuda_lanes_slow_op, rc_cuda_lanes_swap_op};

extern "C" rc_status rc_cuda_lanes_run(const rc_cuda_lanes_job *job,
                                       rc_cuda_member_stats *stats,
                                       char *why, size_t why_size)
{
    rc_status st = RC_OK;
    rc_cuda_lanes_ctx c;
    rc_cuda_member_stats info;
    cudaDeviceProp prop;
    cudaFuncAttributes fast_attr, slow_attr;
    unsigned char *h_model = NULL, *d_model = NULL, *d_live = NULL;
    unsigned char *h_live = NULL;
    double *d_base = NULL, *h_base = NULL;
    int *d_iw = NULL;
    long *d_lw = NULL, *h_lw = NULL;
    size_t model_bytes = 0, freeb = 0, totalb = 0;
    long nd, cap, k0, per_lane, j;
    double t_mark = 0.0;
    int dev = 0, per_sm = 0, N, n, cc, has_stream = 0;
    memset(&c, 0, sizeof c);
    memset(&info, 0, sizeof info);
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!job || job->members < 0 || !job->Q0 || !job->P0 || !job->eps_g ||
        !job->eps_v || !job->live0 || !job->out || job->every < 1) {
        if (why && why_size)
            snprintf(why, why_size, "rc_cuda_lanes_run: bad arguments");
        return RC_ERR_INVALID;
    }
    N = job->view.N;
    n = job->view.m.n;
    c.d = job->view.m.dim;
    c.wd = rc_k_gvi_work_doubles(N, job->view.ncon, job->view.neq);
    c.wi = rc_k_gvi_work_ints(N, job->view.ncon, job->view.neq);
    c.why = why;
    c.why_size = why_size;
    if (c.wd + 3L * N > RC_MEMBER_LOCAL_DOUBLES ||
        c.wi > RC_MEMBER_LOCAL_INTS) {
        if (why && why_size)
            snprintf(why, why_size,
                     "a member's scratch (%ld doubles, %ld ints) does not fit "
                     "the lane kernels' local buffers",
                     c.wd + 3L * N, c.wi);
        return RC_ERR_UNSUPPORTED;
    }
    if (job->members == 0)
        return RC_OK;

    RC_CUDA_TRY(cudaGetDevice(&dev));
    RC_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    snprintf(info.device, sizeof info.device, "%s", prop.name);
    RC_CUDA_TRY(cudaFuncGetAttributes(&fast_attr, rc_g_lanes_fast));
    RC_CUDA_TRY(cudaFuncGetAttributes(&slow_attr, rc_g_lanes_slow));
    RC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, rc_g_lanes_fast, RC_MEMBER_BLOCK, 0));
    if (per_sm < 1)
        per_sm = 1;
    info.registers = fast_attr.numRegs;
    info.slow_registers = slow_attr.numRegs;
    info.local_bytes = (long)slow_attr.localSizeBytes;
    info.blocks_per_sm = per_sm;
    info.resident = (long)prop.multiProcessorCount * per_sm * RC_MEMBER_BLOCK;
    info.local_scratch = 1;
    info.lanes = 1;

    t_mark = rc_cuda_now();
    RC_CUDA_TRY(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
    has_stream = 1;
    st = rc_cuda_model_alloc(&job->view, &c.g, &h_model, &d_model,
                             &model_bytes, why, why_size);
    if (st != RC_OK)
        goto done;
    RC_CUDA_TRY(cudaMemcpyAsync(d_model, h_model, model_bytes,
                                cudaMemcpyHostToDevice, c.stream));

    /* Chunks of at most RC_CUDA_LANES_CHUNK lanes (or the caller's cap)
     * within half the free memory: a lane costs its lane arrays, ints,
     * longs, live and its list entry. */
    per_lane = rc_k_lanes_doubles(N, n, 1) * (long)sizeof(double) +
               (RC_K_LANES_INTS + 1) * (long)sizeof(int) +
               RC_K_LANES_LONGS * (long)sizeof(long) + 1;
    RC_CUDA_TRY(cudaMemGetInfo(&freeb, &totalb));
    cap = job->max_chunk > 0 ? job->max_chunk : RC_CUDA_LANES_CHUNK;
    if ((long)(freeb / 2) / per_lane < cap)
        cap = (long)(freeb / 2) / per_lane;
    if (cap > job->members)
        cap = job->members;
    if (cap < 1) {
        if (why && why_size)
            snprintf(why, why_size, "no device memory for one lane (%ld "
                                    "bytes)", per_lane);
        st = RC_ERR_NOMEM;
        goto done;
    }
    nd = rc_k_lanes_doubles(N, n, cap);
    RC_CUDA_TRY(cudaMalloc((void **)&d_base, (size_t)nd * sizeof(double)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_iw, (size_t)(RC_K_LANES_INTS + 1) *
                                               (size_t)cap * sizeof(int) +
                                               2 * sizeof(int)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_lw, (size_t)RC_K_LANES_LONGS *
                                               (size_t)cap * sizeof(long)));
    RC_CUDA_TRY(cudaMalloc((void **)&d_live, (size_t)cap));
    /* pageable host images: each is copied once a chunk, and pinning a
     * chunk's tens of megabytes costs more than the copies */
    h_base = (double *)malloc((size_t)nd * sizeof(double));
    h_lw = (long *)malloc((size_t)RC_K_LANES_LONGS * (size_t)cap *
                          sizeof(long));
    h_live = (unsigned char *)malloc((size_t)cap);
    if (!h_base || !h_lw || !h_live) {
        if (why && why_size)
            snprintf(why, why_size, "out of host memory for a chunk of "
                                    "%ld lanes", cap);
        st = RC_ERR_NOMEM;
        goto done;
    }
    info.block = RC_MEMBER_BLOCK;
    info.chunk_size = cap;
    info.slots = 1;
    info.bytes_per_member = per_lane;

    for (k0 = 0; k0 < job->members; k0 += cap) {
        long B = job->members - k0 < cap ? job->members - k0 : cap;
        rc_k_lanes hs;
        rc_k_lanes_stats hst;
        rc_lanes_time t;
        int rc;
        /* the chunk's lanes carved with stride B, on the device and in the
         * host image (same offsets) */
        rc_k_lanes_carve(&c.s, &c.st, N, n, B, d_base, d_iw, d_lw, d_live);
        rc_k_lanes_carve(&hs, &hst, N, n, B, h_base, d_iw, h_lw, h_live);
        c.list = d_iw + RC_K_LANES_INTS * B;
        c.count = c.list + B;
        c.B = B;
        rc_launch_grid(B, RC_MEMBER_BLOCK, prop.multiProcessorCount * per_sm,
                       &c.grid);
        info.grid = c.grid;
        if (k0 == 0) {
            RC_CUDA_TRY(cudaStreamSynchronize(c.stream)); /* the model */
            info.seconds_setup = rc_cuda_now() - t_mark;
        }
        t_mark = rc_cuda_now();
        if (hs.p != hs.q + (long)N * B || hs.eps_v != hs.eps_g + B ||
            hst.dl + B != h_base + rc_k_lanes_doubles(N, n, B)) {
            if (why && why_size)
                snprintf(why, why_size, "rc_k_lanes_carve's layout is not "
                                        "the one the copies assume");
            st = RC_ERR_INVALID;
            goto done;
        }
        /* in: the lane arrays zeroed on the device, then only what the
         * host sets, q and p (contiguous) and the tolerances (the
         * host image has the device's offsets) */
        for (cc = 0; cc < N; ++cc)
            for (j = 0; j < B; ++j) {
                hs.q[(long)cc * B + j] = job->Q0[(long)cc * job->members + k0 + j];
                hs.p[(long)cc * B + j] = job->P0[(long)cc * job->members + k0 + j];
            }
        for (j = 0; j < B; ++j) {
            hs.eps_g[j] = job->eps_g[k0 + j];
            hs.eps_v[j] = job->eps_v[k0 + j];
            h_live[j] = job->live0[k0 + j];
        }
        RC_CUDA_TRY(cudaMemsetAsync(d_base, 0,
                                    (size_t)rc_k_lanes_doubles(N, n, B) *
                                        sizeof(double),
                                    c.stream));
        RC_CUDA_TRY(cudaMemcpyAsync(c.s.q, hs.q,
                                    (size_t)(2L * N * B) * sizeof(double),
                                    cudaMemcpyHostToDevice, c.stream));
        RC_CUDA_TRY(cudaMemcpyAsync(c.s.eps_g, hs.eps_g,
                                    (size_t)(2L * B) * sizeof(double),
                                    cudaMemcpyHostToDevice, c.stream));
        RC_CUDA_TRY(cudaMemcpyAsync(d_live, h_live, (size_t)B,
                                    cudaMemcpyHostToDevice, c.stream));
        RC_CUDA_TRY(cudaMemsetAsync(d_lw, 0,
                                    (size_t)RC_K_LANES_LONGS * (size_t)B *
                                        sizeof(long),
                                    c.stream));
        RC_CUDA_TRY(cudaMemsetAsync(c.count, 0, 2 * sizeof(int), c.stream));
        RC_CUDA_TRY(cudaStreamSynchronize(c.stream));
        info.seconds_copies += rc_cuda_now() - t_mark;
        t_mark = rc_cuda_now();
        rc = rc_lanes_drive(&rc_cuda_lanes_ops, &c, job->steps, job->every,
                            job->rows, job->dt, &t);
        if (rc != 0) {
            st = RC_ERR_DEVICE;
            goto done;
        }
        RC_CUDA_TRY(cudaStreamSynchronize(c.stream));
        info.seconds_steps += rc_cuda_now() - t_mark;
        t_mark = rc_cuda_now();
        /* the statistics back (the state is not wanted): rc_k_lanes_out
         * reads the statistics from e0 to the end of the doubles, the
         * counters and live */
        RC_CUDA_TRY(cudaMemcpyAsync(
            hst.e0, c.st.e0,
            (size_t)(rc_k_lanes_doubles(N, n, B) - (hst.e0 - h_base)) *
                sizeof(double),
            cudaMemcpyDeviceToHost, c.stream));
        RC_CUDA_TRY(cudaMemcpyAsync(h_lw, d_lw,
                                    (size_t)RC_K_LANES_LONGS * (size_t)B *
                                        sizeof(long),
                                    cudaMemcpyDeviceToHost, c.stream));
        RC_CUDA_TRY(cudaMemcpyAsync(h_live, d_live, (size_t)B,
                                    cudaMemcpyDeviceToHost, c.stream));
        RC_CUDA_TRY(cudaStreamSynchronize(c.stream));
        for (j = 0; j < B; ++j)
            rc_k_lanes_out(&hst, B, j, t.rows, t.s_t, t.s_tt,
                           &job->out[k0 + j]);
        info.seconds_copies += rc_cuda_now() - t_mark;
        ++info.chunks;
    }
    info.waves = (info.chunk_size + info.resident - 1) / info.resident;
    if (stats)
        *stats = info;
done:
    if (st != RC_OK)
        cudaGetLastError();
    if (has_stream) {
        cudaStreamSynchronize(c.stream);
        cudaStreamDestroy(c.stream);
    }
    cudaFree(d_base);
    cudaFree(d_iw);
    cudaFree(d_lw);
    cudaFree(d_live);
    cudaFree(d_model);
    free(h_base);
    free(h_lw);
    free(h_live);
    free(h_model);
    if (st != RC_OK)
        cudaGetLastError();
    return st;
}
