/* The CPU launcher's candidate info in lanes (cand_lanes.c): CAND_INFO
 * and X_CAND_INFO_PRED over candidates [lo, hi) (pred: with the
 * predictions), the bits of their bodies. */
#ifndef RC_MD_CAND_LANES_H
#define RC_MD_CAND_LANES_H

#include "../../kernels/rc_md_exact.h"

void rc_dmd_cpu_cand_info(const rc_k_md *v, long lo, long hi, int pred);

#endif
