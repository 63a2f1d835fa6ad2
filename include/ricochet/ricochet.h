/* ricochet — structure-preserving integrators for mechanical systems of
 * spheres with hard contacts.  Umbrella header of the public C API. */
#ifndef RICOCHET_H
#define RICOCHET_H

#include "ricochet/status.h"
#include "ricochet/system.h"
#include "ricochet/scenario.h"
#include "ricochet/run.h"
#include "ricochet/ensemble.h"
#include "ricochet/md.h"

#endif
