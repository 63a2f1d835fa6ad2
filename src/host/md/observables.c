/* placeholder: being written */
#include "observables.h"
typedef int rc_md_observables_placeholder_;
