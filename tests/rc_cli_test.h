/* Helpers shared by the tests that run the `ricochet` binary end to end
 * (test_cli, test_compare, test_plot).
 *
 * A CLI test defines _POSIX_C_SOURCE 200809L before any include, and its
 * main() looks like
 *     if (cli_test_start("test_x"))
 *         return 1;
 *     ...checks, running the binary with cli("run '%s' ...", ...)...
 *     return cli_test_finish("test_x");
 * cli_test_start makes a scratch directory g_dir; cli_test_finish removes
 * it when every check passed and keeps it (and says where) otherwise.
 *
 * CMake sets RC_CLI (the binary) and RC_EXAMPLES_DIR (the bundled
 * examples).  The helpers are static inline so that a test that does not
 * use one gets no unused-function warning. */
#ifndef RC_CLI_TEST_H
#define RC_CLI_TEST_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "define _POSIX_C_SOURCE 200809L before any include"
#endif

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "rc_test.h"

#ifndef RC_CLI
#error "RC_CLI must be the path of the ricochet binary (set by CMake)"
#endif
#ifndef RC_EXAMPLES_DIR
#error "RC_EXAMPLES_DIR must name the examples directory (set by CMake)"
#endif

static char g_dir[256];              /* the test's scratch directory */
static char g_out[512], g_errf[512]; /* captured stdout / stderr */
static char *g_stdout = NULL, *g_stderr = NULL; /* of the last cli() */

/* Whole file into a malloc'd NUL-terminated string; NULL if unreadable.
 * *size (may be NULL) receives the bytes read, -1 if none. */
static inline char *slurp_n(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n = -1;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (s = (char *)malloc((size_t)n + 1))) {
        size_t got = fread(s, 1, (size_t)n, f);
        s[got] = '\0';
        n = (long)got;
    }
    fclose(f);
    if (size)
        *size = s ? n : -1;
    return s;
}

/* slurp_n without the size. */
static inline char *slurp(const char *path)
{
    return slurp_n(path, NULL);
}

/* Whether dir/name exists. */
/* 1 when both files exist and hold the same bytes. */
static inline int same_file(const char *a, const char *b)
{
    long na = -1, nb = -2;
    char *x = slurp_n(a, &na), *y = slurp_n(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

static inline int exists(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* Run `[env] RC_CLI args` (env: shell assignments such as PATH=..., or
 * "") with stdout and stderr captured into g_stdout and g_stderr (never
 * NULL afterwards); returns the exit status (-1 if it did not exit
 * normally). */
static inline int cli_shell(const char *cmd);

static inline int cli_env(const char *env, const char *fmt, ...)
{
    char args[4096], cmd[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s '%s' %s >'%s' 2>'%s' </dev/null", env,
             RC_CLI, args, g_out, g_errf);
    return cli_shell(cmd);
}

/* Run a shell command line that sends its output to g_out and g_errf;
 * capture them into g_stdout and g_stderr as cli_env does and return
 * the exit status (-1 if the shell did not exit normally). */
static inline int cli_shell(const char *cmd)
{
    int rc = system(cmd);
    free(g_stdout);
    free(g_stderr);
    g_stdout = slurp(g_out);
    g_stderr = slurp(g_errf);
    if (!g_stdout)
        g_stdout = (char *)calloc(1, 1);
    if (!g_stderr)
        g_stderr = (char *)calloc(1, 1);
    if (rc == -1 || !WIFEXITED(rc))
        return -1;
    return WEXITSTATUS(rc);
}

/* cli("fmt", ...): cli_env with no environment. */
#define cli(...) cli_env("", __VA_ARGS__)

/* Names in dir (other than . and ..) ending in `suffix`; the first goes
 * to first (may be NULL).  0 if dir does not exist. */
static inline int count_suffix(const char *dir, const char *suffix,
                               char *first, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t ns = strlen(suffix);
    int n = 0;
    if (first && size)
        first[0] = '\0';
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (len >= ns && !strcmp(e->d_name + len - ns, suffix)) {
            if (n == 0 && first)
                snprintf(first, size, "%s", e->d_name);
            ++n;
        }
    }
    closedir(d);
    return n;
}

/* Entries other than . and ..; -1 if the directory does not exist. */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            ++n;
    closedir(d);
    return n;
}

/* Write text to path; exits the test (status 1) if it cannot. */
static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* Split a CSV line in place at the commas (no quoting in these formats):
 * up to max field pointers into fields; returns the number of fields. */
static inline int split(char *line, char **fields, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        char *c = strchr(s, ',');
        if (n < max)
            fields[n] = s;
        ++n;
        if (!c)
            break;
        *c = '\0';
        s = c + 1;
    }
    return n;
}

/* dir/name parsed as JSON (NULL if unreadable or malformed); delete it
 * after use. */
static inline cJSON *json_file(const char *dir, const char *name)
{
    char path[1100];
    char *text;
    cJSON *root;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    text = slurp(path);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    return root;
}

/* The rule for `--backend cuda` on a machine without a usable device: the
 * run that ended with exit status rc (output dir) exited 2, said why, and
 * wrote nothing. */
static inline void check_cuda_refused(int rc, const char *dir,
                                      const char *what)
{
    RC_CHECK(rc == 2, "%s without a device: exit %d, want 2", what, rc);
    RC_CHECK(strstr(g_stderr, "backend cuda requested but") != NULL,
             "%s without a device: stderr '%s'", what, g_stderr);
    RC_CHECK(count_entries(dir) <= 0, "%s without a device wrote into %s",
             what, dir);
}

/* root[key] as a number (NaN if absent or not a number). */
static inline double num(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* root[key] as a string ("" if absent or not a string). */
static inline const char *str(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* rm -r dir (does not follow links).  Plain static: inlining the
 * recursion trips -Wformat-truncation; every CLI test calls it through
 * cli_test_finish, so it is never unused. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[1024];
    struct stat st;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Check that RC_CLI is built, make g_dir ($TMPDIR or /tmp,
 * rc_<name>_XXXXXX) with the capture files in it (outside the run
 * directories the test makes), and unset OMP_NUM_THREADS.  Returns 0, or
 * 1 after saying why (main returns that). */
static inline int cli_test_start(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    struct stat st;
    if (stat(RC_CLI, &st) != 0) {
        fprintf(stderr, "%s: %s not built\n", name, RC_CLI);
        return 1;
    }
    snprintf(g_dir, sizeof g_dir, "%s/rc_%s_XXXXXX",
             tmp && *tmp ? tmp : "/tmp", name);
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_out, sizeof g_out, "%s/stdout.txt", g_dir);
    snprintf(g_errf, sizeof g_errf, "%s/stderr.txt", g_dir);
    unsetenv("OMP_NUM_THREADS");
    return 0;
}

/* Free the captured output, remove g_dir if every check passed (else
 * keep it and say so), and return rc_test_finish(name). */
static inline int cli_test_finish(const char *name)
{
    free(g_stdout);
    free(g_stderr);
    g_stdout = g_stderr = NULL;
    if (rc_test_failed_ == 0)
        remove_tree(g_dir);
    else
        fprintf(stderr, "%s: files kept in %s\n", name, g_dir);
    return rc_test_finish(name);
}

#endif
