/* `mpirun -np K ricochet run ENSEMBLE` (issue 19): the members split
 * into K contiguous ranges, one per process, rank 0 gathers the records
 * and writes; members.csv, groups.csv and the traces must be the bytes
 * of the single-process run, ensemble.json the same but for the run
 * metadata, which lists one range per rank.  Pogo sticks on 2 processes
 * (batch engine, a traced member on each rank), Newton's cradle on 3
 * (per-member engine, groups.csv, uneven ranges 7, 7, 6), a --members
 * range split over 3 processes, more processes than members, and the
 * refusal of a single scenario under mpirun.  Skipped (77) only in a
 * build without MPI. */
#define _POSIX_C_SOURCE 200809L
#include "rc_cli_test.h"
#include "rc_ensemble_same.h"

#ifndef RC_MPIEXEC
int main(void)
{
    printf("test_ensemble_mpi: built without MPI (RICOCHET_MPI=OFF or no "
           "MPI found): skipped\n");
    return 77;
}
#else

/* The launcher with what a container's root and 2 cores need (Open
 * MPI's variables; other MPIs ignore them), one OpenMP thread a rank. */
static void launcher(char *buf, size_t size, int np)
{
    snprintf(buf, size,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             "OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1 '%s' "
             "-n %d",
             RC_MPIEXEC, np);
}

/* scenario whole in one process, then under np processes: the same. */
static void check_mpi(const char *tag, const char *scenario,
                      const char *args, int np)
{
    char one[600], many[600], env[1200], what[200];
    int rc;
    cJSON *j;
    snprintf(one, sizeof one, "%s/%s-one", g_dir, tag);
    snprintf(many, sizeof many, "%s/%s-np%d", g_dir, tag, np);
    rc = cli("run '%s' %s --quiet --out '%s'", scenario, args, one);
    RC_CHECK(rc == 0, "%s: one process: exit %d: %s", tag, rc, g_stderr);
    launcher(env, sizeof env, np);
    rc = cli_env(env, "run '%s' %s --quiet --out '%s'", scenario, args, many);
    RC_CHECK(rc == 0, "%s: %d processes: exit %d: %s", tag, np, rc,
             g_stderr);
    snprintf(what, sizeof what, "%s on %d MPI processes", tag, np);
    same_ensemble(one, many, what);
    j = json_file(many, "ensemble.json");
    RC_CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                 j, "ranges")) == np,
             "%s: ensemble.json lists %d ranges, want one per rank (%d)", tag,
             cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "ranges")),
             np);
    cJSON_Delete(j);
}

int main(void)
{
    char pogo[600], cradle[600], single[600], env[1200], out[700];
    int rc;
    if (cli_test_start("test_ensemble_mpi"))
        return 1;
    snprintf(pogo, sizeof pogo, "%s/pogo_ensemble.yaml", RC_EXAMPLES_DIR);
    snprintf(cradle, sizeof cradle, "%s/cradle_ensemble.yaml",
             RC_EXAMPLES_DIR);
    snprintf(single, sizeof single, "%s/pogo_stick.yaml", RC_EXAMPLES_DIR);
    check_mpi("pogo", pogo,
              "--set ensemble.members=300 --set integrator.duration=10 "
              "--set 'output.trace_members=[0,299]'",
              2);
    check_mpi("cradle", cradle, "--set integrator.duration=2", 3);
    /* a range over 3 ranks: rank 0 writes the range's outputs */
    check_mpi("cradle-range", cradle,
              "--set integrator.duration=2 --members 2:9", 3);
    /* more ranks than members: the last one runs none */
    check_mpi("tiny", pogo,
              "--set ensemble.members=2 --set integrator.duration=5", 3);
    /* a single scenario is not split: refused, nothing written */
    launcher(env, sizeof env, 2);
    snprintf(out, sizeof out, "%s/single", g_dir);
    rc = cli_env(env, "run '%s' --quiet --out '%s'", single, out);
    RC_CHECK(rc != 0 && strstr(g_stderr, "only ensembles run under mpirun"),
             "a single run under mpirun: exit %d, '%s'", rc, g_stderr);
    RC_CHECK(count_entries(out) <= 0, "a refused run wrote into %s", out);
    return cli_test_finish("test_ensemble_mpi");
}
#endif
