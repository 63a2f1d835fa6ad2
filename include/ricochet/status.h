/* ricochet — status codes shared by every public function.
 *
 * 0 is success, negative values are errors, positive values are
 * informational (the call succeeded but something is worth knowing).
 * The list is one X-macro so that the enum and rc_status_str() cannot
 * drift apart. */
#ifndef RICOCHET_STATUS_H
#define RICOCHET_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define RC_STATUS_LIST(X)                                                    \
    X(RC_OK, 0, "success")                                                   \
    X(RC_ERR_INVALID, -1, "invalid argument")                                \
    X(RC_ERR_NOMEM, -2, "out of memory")                                     \
    X(RC_ERR_IO, -3, "input/output error")                                   \
    X(RC_ERR_PARSE, -4, "malformed input")                                   \
    X(RC_ERR_NOT_CONVERGED, -5, "solver did not converge")                   \
    X(RC_ERR_NONFINITE, -6, "non-finite value in the state")                 \
    X(RC_ERR_UNSUPPORTED, -7, "not supported by this build or backend")      \
    X(RC_ERR_STATE, -8, "call not valid in the current state")               \
    X(RC_ERR_DEVICE, -9, "accelerator error")                                \
    X(RC_ERR_CONSTRAINT, -10, "constraint could not be satisfied")           \
    X(RC_ERR_ZENO, -11, "too many events in one step")

typedef enum rc_status {
#define RC_STATUS_ENUM(name, value, text) name = value,
    RC_STATUS_LIST(RC_STATUS_ENUM)
#undef RC_STATUS_ENUM
    RC_STATUS_SENTINEL_ = 1
} rc_status;

/* The library's version, "MAJOR.MINOR.PATCH" (the one a checkpoint and
 * summary.json record). */
const char *rc_version(void);

/* A short, static, human-readable description of a status code. */
const char *rc_status_str(rc_status status);

/* The symbolic name ("RC_ERR_PARSE") of a status code. */
const char *rc_status_name(rc_status status);

#ifdef __cplusplus
}
#endif
#endif
