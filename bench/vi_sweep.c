/* Seed 001 (Pekarek & Murphey) Fig. 4 and Table II: the vertical
 * cart-pendulum from Xi(beta), 51 values of beta in [3.2, 5.2], T = 5,
 * each run with CVA, VCI, MCVA-A and MCVA-C at h = 0.032 and 0.01; the L²
 * configuration error against a CVA reference at h = 1e-4
 * (tests/rc_vi_sweep.h says how), and the wall time of each simulation.
 *
 *   bench_vi_sweep [OUTDIR]      (default bench/results)
 *
 * writes OUTDIR/vi_sweep.csv (beta, method, h, l2_error, seconds,
 * impacts), OUTDIR/vi_sweep.json (per method and step: median, min and
 * max L² error; mean wall time with its 95 % confidence interval, mean ±
 * 1.96 s/√51, as the seed's Table II) and prints the tables.  Serial:
 * one simulation at a time, so the times are those of one core (the
 * machine is printed).  Draw Fig. 4 with bench/vi_figures.sh. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "rc_vi_test.h"
#include "rc_vi_sweep.h"

#define NB 51

int main(int argc, char **argv)
{
    static const rc_model_method *const meths[4] = {
        &rc_model_method_cva, &rc_model_method_vci, &rc_model_method_mcva_a,
        &rc_model_method_mcva_c};
    static const double hs[2] = {0.032, 0.01};
    static double err[4][2][NB], sec[4][2][NB];
    const char *dir = argc > 1 ? argv[1] : RICOCHET_BENCH_DIR "/results";
    char path[1024];
    FILE *csv, *js;
    struct utsname u;
    int b, k, j;
    snprintf(path, sizeof path, "%s/vi_sweep.csv", dir);
    csv = fopen(path, "w");
    if (!csv) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    fprintf(csv, "beta,method,h,l2_error,seconds,impacts\n");
    for (b = 0; b < NB; ++b) {
        double beta = 3.2 + 2.0 * b / (NB - 1), *ref;
        rc_model m;
        if (vi_sweep_model(beta, &m))
            return 1;
        if (!(ref = vi_sweep_reference(&m))) {
            fprintf(stderr, "beta %g: the reference run failed\n", beta);
            return 1;
        }
        for (k = 0; k < 4; ++k)
            for (j = 0; j < 2; ++j) {
                long imp = 0;
                err[k][j][b] = vi_sweep_error(meths[k], &m, hs[j], ref,
                                              &sec[k][j][b], &imp);
                fprintf(csv, "%.4f,%s,%g,%.17g,%.6g,%ld\n", beta,
                        meths[k]->name, hs[j], err[k][j][b], sec[k][j][b],
                        imp);
            }
        free(ref);
        vi_model_free(&m);
        fprintf(stderr, "\rbeta %d/%d", b + 1, NB);
    }
    fprintf(stderr, "\n");
    fclose(csv);
    snprintf(path, sizeof path, "%s/vi_sweep.json", dir);
    js = fopen(path, "w");
    if (!js)
        return 1;
    uname(&u);
    fprintf(js, "{\n  \"machine\": \"%s %s\",\n  \"members\": %d,\n  "
                "\"results\": [\n", u.nodename, u.machine, NB);
    printf("machine: %s %s; %d values of beta, T = 5\n", u.nodename,
           u.machine, NB);
    printf("method  h      median L2   min L2      max L2      time/sim "
           "[s] (95%% CI)\n");
    for (k = 0; k < 4; ++k)
        for (j = 0; j < 2; ++j) {
            double mean = 0.0, var = 0.0, lo = INFINITY, hi = 0.0, med, ci;
            for (b = 0; b < NB; ++b) {
                mean += sec[k][j][b] / NB;
                lo = fmin(lo, err[k][j][b]);
                hi = fmax(hi, err[k][j][b]);
            }
            for (b = 0; b < NB; ++b)
                var += (sec[k][j][b] - mean) * (sec[k][j][b] - mean) /
                       (NB - 1);
            ci = 1.96 * sqrt(var / NB);
            med = vi_sweep_median(err[k][j], NB);
            printf("%-7s %-6g %.3e   %.3e   %.3e   %.4f ± %.4f\n",
                   meths[k]->name, hs[j], med, lo, hi, mean, ci);
            fprintf(js,
                    "    {\"method\": \"%s\", \"h\": %g, \"median_l2\": "
                    "%.6g, \"min_l2\": %.6g, \"max_l2\": %.6g, "
                    "\"seconds_mean\": %.6g, \"seconds_ci95\": %.6g}%s\n",
                    meths[k]->name, hs[j], med, lo, hi, mean, ci,
                    (k == 3 && j == 1) ? "" : ",");
        }
    fprintf(js, "  ]\n}\n");
    fclose(js);
    return 0;
}
