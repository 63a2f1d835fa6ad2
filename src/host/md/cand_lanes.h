/* The CPU launcher's loops in lanes (cand_lanes.c), the bits of their
 * bodies: CAND_INFO and X_CAND_INFO_PRED over candidates [lo, hi) (pred:
 * with the predictions), and X_SCREEN_PAIR at the step's start over
 * items [lo, hi), without predictions and with them. */
#ifndef RC_MD_CAND_LANES_H
#define RC_MD_CAND_LANES_H

#include "../../kernels/rc_md_exact.h"

void rc_dmd_cpu_cand_info(const rc_k_md *v, long lo, long hi, int pred);
void rc_dmd_cpu_first_scan(const rc_k_md *v, long lo, long hi);
void rc_dmd_cpu_first_scan_pred(const rc_k_md *v, long lo, long hi);

#endif
