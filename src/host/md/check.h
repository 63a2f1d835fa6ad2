/* The set-up of a large system checked without running it (check.c):
 * what `ricochet validate` and rc_run() refuse as bad input. */
#ifndef RC_MD_CHECK_H
#define RC_MD_CHECK_H

#include "ricochet/scenario.h"

/* Build the initial state of a scenario with a box (box size, lattice
 * placement or the listed/read particles, Maxwell–Boltzmann momenta),
 * check it as the engine does at its start (masses and radii, walls,
 * overlaps) and check that the box holds the candidate range of the
 * first step (the contact or pair range, a skin, and the first step's
 * motion) with a cell grid; free everything.  RC_OK, or RC_ERR_PARSE
 * with the file, line, column and field to blame (RC_ERR_NOMEM when out
 * of memory). */
rc_status rc_md_check_start_(const rc_scenario *scn, rc_error *err);

#endif
