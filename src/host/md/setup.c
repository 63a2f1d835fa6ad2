/* placeholder: being written */
#include "setup.h"
typedef int rc_md_setup_placeholder_;
