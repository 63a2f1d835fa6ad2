/* Whether two ensemble output directories hold the same run (tests of
 * ranges, merge and MPI): members.csv, groups.csv and every trace byte
 * for byte, ensemble.json byte for byte once the run metadata is taken
 * out of both (README, "Distributed ensembles": engine, threads,
 * wall_seconds, member_steps_per_second, ranges).  Include after
 * rc_cli_test.h. */
#ifndef RC_ENSEMBLE_SAME_H
#define RC_ENSEMBLE_SAME_H

/* ensemble.json of dir without the run metadata, as cJSON prints it
 * (malloc'd; NULL if unreadable).  Both sides are printed by cJSON from
 * files cJSON printed, so equal text means equal keys, order and
 * values. */
static char *ens_json_masked(const char *dir)
{
    static const char *const meta[] = {"engine", "threads", "wall_seconds",
                                       "member_steps_per_second", "ranges",
                                       NULL};
    cJSON *root = json_file(dir, "ensemble.json");
    char *text;
    int k;
    if (!root)
        return NULL;
    for (k = 0; meta[k]; ++k)
        cJSON_DeleteItemFromObjectCaseSensitive(root, meta[k]);
    text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* Files of a/sub equal those of b/sub, and b/sub has no other. */
static void same_dir_files(const char *a, const char *b, const char *sub,
                           const char *what)
{
    char da[1100], db[1100];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(da, sizeof da, "%s/%s", a, sub);
    snprintf(db, sizeof db, "%s/%s", b, sub);
    d = opendir(da);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char pa[1400], pb[1400];
        if (e->d_name[0] == '.')
            continue;
        snprintf(pa, sizeof pa, "%s/%s", da, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s", db, e->d_name);
        RC_CHECK(same_file(pa, pb), "%s: %s/%s differs from %s", what, sub,
                 e->d_name, pa);
        ++n;
    }
    closedir(d);
    RC_CHECK(count_entries(db) == n, "%s: %s has %d entries, want %d", what,
             db, count_entries(db), n);
}

/* got is the same run as want (want: one process, every member). */
static void same_ensemble(const char *want, const char *got,
                          const char *what)
{
    char pa[1100], pb[1100];
    char *ja = ens_json_masked(want), *jb = ens_json_masked(got);
    snprintf(pa, sizeof pa, "%s/members.csv", want);
    snprintf(pb, sizeof pb, "%s/members.csv", got);
    RC_CHECK(same_file(pa, pb), "%s: members.csv differs", what);
    if (exists(want, "groups.csv")) {
        snprintf(pa, sizeof pa, "%s/groups.csv", want);
        snprintf(pb, sizeof pb, "%s/groups.csv", got);
        RC_CHECK(same_file(pa, pb), "%s: groups.csv differs", what);
    }
    RC_CHECK(exists(want, "groups.csv") == exists(got, "groups.csv"),
             "%s: groups.csv in one of the two only", what);
    RC_CHECK(ja && jb && !strcmp(ja, jb),
             "%s: ensemble.json differs beyond the run metadata", what);
    same_dir_files(want, got, "traces", what);
    free(ja);
    free(jb);
}

#endif
