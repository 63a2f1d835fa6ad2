/* placeholder: being written */
#include "cells.h"
typedef int rc_md_cells_placeholder_;
