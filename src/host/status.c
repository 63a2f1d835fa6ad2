#include "ricochet/status.h"

#ifndef RICOCHET_VERSION
#define RICOCHET_VERSION "unknown"
#endif

const char *rc_version(void)
{
    return RICOCHET_VERSION;
}

const char *rc_status_str(rc_status status)
{
    switch (status) {
#define RC_STATUS_CASE(name, value, text) \
    case name:                            \
        return text;
        RC_STATUS_LIST(RC_STATUS_CASE)
#undef RC_STATUS_CASE
    default:
        return status > 0 ? "informational status" : "unknown error";
    }
}

const char *rc_status_name(rc_status status)
{
    switch (status) {
#define RC_STATUS_CASE(name, value, text) \
    case name:                            \
        return #name;
        RC_STATUS_LIST(RC_STATUS_CASE)
#undef RC_STATUS_CASE
    default:
        return "RC_STATUS_UNKNOWN";
    }
}
