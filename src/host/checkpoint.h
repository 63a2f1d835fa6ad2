/* Checkpoint files: the complete state of a run, so that `ricochet run
 * --restart FILE` continues it to the same bytes an uninterrupted run
 * writes.
 *
 * Layout (all integers in the writer's byte order, which the reader
 * checks through a byte-order mark):
 *   header   "RCCKPT\r\n" (8 bytes: the \r\n catches text-mode mangling),
 *            u32 format version, u32 byte-order mark 0x01020304,
 *            u32 kind (rc_ckpt_kind), u32 0, char[32] ricochet version
 *   sections char[8] tag (NUL-padded), u64 length, payload
 *   trailer  tag "END", u64 4, u32 CRC-32 (zlib) of every byte before it
 * A file is written as NAME.tmp, flushed, fsync'ed and renamed over NAME
 * (and the directory fsync'ed), so a crash leaves the previous checkpoint
 * or the new one, never half of one.  The reader refuses another format
 * version, another ricochet version (exact continuation is promised only
 * by the code that wrote it), another byte order, a bad CRC and any
 * section that runs past the end. */
#ifndef RC_CHECKPOINT_H
#define RC_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "ricochet/scenario.h"
#include "output.h"

#define RC_CKPT_FORMAT 1
#define RC_CKPT_NAME "checkpoint.rcp"

typedef enum rc_ckpt_kind {
    RC_CKPT_SINGLE = 1,   /* one system (run.c) */
    RC_CKPT_ENSEMBLE = 2, /* the finished members of an ensemble */
    RC_CKPT_LARGE = 3     /* a large system (md/run_md.c) */
} rc_ckpt_kind;

/* ------------------------------------------------------------ writing */
typedef struct rc_ckpt_writer {
    FILE *f;
    unsigned long crc;
    int bad;
    char path[1100], tmp[1120];
} rc_ckpt_writer;

/* Start DIR/checkpoint.rcp (as .tmp). */
rc_status rc_ckpt_begin(rc_ckpt_writer *w, const char *dir, rc_ckpt_kind kind,
                        rc_error *err);
/* One section; tag at most 8 characters. */
void rc_ckpt_put(rc_ckpt_writer *w, const char *tag, const void *data,
                 size_t bytes);
void rc_ckpt_put_long(rc_ckpt_writer *w, const char *tag, long v);
void rc_ckpt_put_string(rc_ckpt_writer *w, const char *tag, const char *s);
/* The scenario that runs (its source text, path and --set overrides) and
 * the output directory: what --restart needs to rebuild it. */
rc_status rc_ckpt_put_scenario(rc_ckpt_writer *w, const rc_scenario *scn,
                               const char *out_dir, rc_error *err);
/* An output file's bytes so far (flushed and fsync'ed): its length and
 * the CRC-32 of those bytes, checked and cut back to on restart. */
rc_status rc_ckpt_put_output(rc_ckpt_writer *w, const char *tag,
                             rc_outfile *of, rc_error *err);
/* Trailer, fsync, rename into place.  On failure the .tmp is removed and
 * the previous checkpoint (if any) stays. */
rc_status rc_ckpt_finish(rc_ckpt_writer *w, rc_error *err);
void rc_ckpt_abandon(rc_ckpt_writer *w);

/* Is a checkpoint due after `step` steps of dt?  output.checkpoint_every
 * in simulated time (*next_time: the next multiple) or wall-clock
 * seconds (*next_wall: the next time on rc_now's clock); advances what
 * it used.  A restart calls it once at its first step so that the
 * checkpoint it starts from is not written again. */
int rc_ckpt_due(const rc_scenario *scn, long step, double dt,
                double *next_time, double *next_wall, double now);

/* Remove the stale outputs `names` (NULL-terminated) of an earlier run
 * in dir; a restart keeps the .partial data files it continues and the
 * checkpoint. */
rc_status rc_ckpt_clear_stale(const char *dir, const char *const *names,
                              int restart, rc_error *err);
/* The message of a run stopped after `steps` of `total`: how to go on
 * from its checkpoint, or (written != RC_OK) why there is none. */
void rc_ckpt_stop_message(char *buf, size_t size, long steps, long total,
                          const char *out_dir, rc_status written,
                          const rc_error *why);

/* ------------------------------------------------------------ reading */
typedef struct rc_ckpt {
    unsigned char *buf;
    size_t len;
    rc_ckpt_kind kind;
    char path[1100];
} rc_ckpt;

/* Read and verify a checkpoint file (refusals are RC_ERR_PARSE with the
 * file named). */
rc_status rc_ckpt_load(const char *path, rc_ckpt *c, rc_error *err);
void rc_ckpt_free(rc_ckpt *c);
/* Refuse a checkpoint as damaged: RC_ERR_PARSE, "not a usable ricochet
 * checkpoint: <what>", the file named. */
rc_status rc_ckpt_corrupt(const rc_ckpt *c, rc_error *err, const char *what);
/* A section's payload (NULL when absent). */
const void *rc_ckpt_find(const rc_ckpt *c, const char *tag, size_t *bytes);
/* Copy section `tag` of exactly `bytes` bytes into dst; a missing or
 * differently sized section is a corrupted checkpoint. */
rc_status rc_ckpt_get(const rc_ckpt *c, const char *tag, void *dst,
                      size_t bytes, rc_error *err);
rc_status rc_ckpt_get_long(const rc_ckpt *c, const char *tag, long *v,
                           rc_error *err);
/* An optional long section (one a later version added): 1 and *v when
 * present, 0 and *v untouched when absent or not 8 bytes. */
int rc_ckpt_find_long(const rc_ckpt *c, const char *tag, long *v);
/* Load the scenario a checkpoint was written for (its source text, with
 * the overrides applied again); *out_dir (may be NULL) receives the
 * output directory it wrote to. */
rc_status rc_ckpt_scenario(const rc_ckpt *c, rc_scenario **out,
                           char *out_dir, size_t out_dir_size, rc_error *err);
/* Reopen DIR/NAME.partial for appending at the length a checkpoint
 * recorded in section `tag`, after checking that its first bytes are the
 * ones recorded (their CRC) and cutting off what came after. */
rc_status rc_ckpt_reopen_output(const rc_ckpt *c, const char *tag,
                                rc_outfile *of, const char *dir,
                                const char *name, rc_error *err);

/* The CLI's entry point: the kind and scenario of a checkpoint file. */
rc_status rc_checkpoint_scenario(const char *path, rc_scenario **out,
                                 char *out_dir, size_t out_dir_size,
                                 rc_error *err);

#endif
