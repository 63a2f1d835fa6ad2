/* Launch configuration of the GPU ensemble engine (see launch.h). */
#include <stddef.h>

#include "launch.h"
#include "../kernels/rc_member.h"

rc_status rc_launch_grid(long items, int block, int max_grid, int *grid)
{
    long g;
    if (!grid || items < 0 || block < 1 || max_grid < 1)
        return RC_ERR_INVALID;
    g = items / block + (items % block != 0);
    *grid = g < (long)max_grid ? (int)g : max_grid;
    return RC_OK;
}

rc_status rc_launch_chunks(long members, long bytes_per_member,
                           long budget_bytes, long max_members_per_chunk,
                           rc_launch_chunking *out)
{
    long size;
    if (!out || members < 0 || bytes_per_member < 1 || budget_bytes < 0 ||
        max_members_per_chunk < 0)
        return RC_ERR_INVALID;
    out->members = members;
    out->size = 0;
    out->count = 0;
    if (members == 0)
        return RC_OK;
    size = budget_bytes / bytes_per_member;
    if (size < 1)
        return RC_ERR_NOMEM;
    if (max_members_per_chunk > 0 && size > max_members_per_chunk)
        size = max_members_per_chunk;
    if (size > members)
        size = members;
    out->size = size;
    out->count = members / size + (members % size != 0);
    return RC_OK;
}

rc_status rc_launch_wave_cap(long resident, long cap, long *out)
{
    if (!out || resident < 1 || cap < 1)
        return RC_ERR_INVALID;
    *out = cap >= resident ? cap / resident * resident : cap;
    return RC_OK;
}

rc_status rc_launch_chunk_range(const rc_launch_chunking *c, long k,
                                long *first, long *count)
{
    if (!c || !first || !count || k < 0 || k >= c->count)
        return RC_ERR_INVALID;
    *first = k * c->size;
    *count = c->members - *first < c->size ? c->members - *first : c->size;
    return RC_OK;
}

rc_status rc_launch_member_workspace(int N, int nc, int neq,
                                     rc_launch_workspace *ws)
{
    if (!ws || N < 1 || nc < 0 || neq < 0 || neq > nc)
        return RC_ERR_INVALID;
    ws->doubles = rc_k_gvi_work_doubles(N, nc, neq) + 2L * N;
    ws->ints = rc_k_gvi_work_ints(N, nc, neq);
    ws->state_bytes =
        2L * N * (long)sizeof(double) + (long)sizeof(rc_k_member_out);
    ws->bytes = ws->doubles * (long)sizeof(double) +
                ws->ints * (long)sizeof(int) + ws->state_bytes;
    return RC_OK;
}
