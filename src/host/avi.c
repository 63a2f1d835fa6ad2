/* Asynchronous variational integrator with nested penalty layers
 * (seeds 003 and 004; DESIGN §9).  CPU only: the event queue is
 * sequential.
 *
 * Every potential term has its own clock: term i ticks at T0 + k h_i,
 * k = 1, 2, ...  At a tick the particles of its stencil are drifted
 * lazily to the tick time (x += (t - t_x) p/m, each particle keeps its
 * own clock) and receive the impulse -h_i grad V_i, evaluated with the
 * potential bodies of src/kernels/rc_potential.h.  This is the discrete
 * Euler-Lagrange equation (11) of seed 003; with every step equal it is
 * Störmer-Verlet (leapfrog form: a half kick at T0, full kicks after).
 *
 * Terms: one per particle for gravity, anchors and external wells, one
 * per spring, one for the Lennard-Jones/WCA pair sum (its stencil is
 * every particle).  Contacts: every inequality constraint term of the
 * system (sphere pair, wall, container, obstacle) is a contact whose
 * layers (rc_avi.h) replace the hard constraint; layer l ticks on its own
 * lattice T0 + k h_l.
 *
 * Safety (the proximity test, a kinetic data structure): between two
 * impulses on its particles a contact's gap moves along an exactly known
 * curve (linear motion).  Each near contact with L open layers holds a
 * certificate "the gap stays above eta_{L+1}" and its failure time on
 * that curve; every impulse on a particle recomputes the certificates of
 * its contacts.  When one fails, layer L+1 opens (its first tick is the
 * next point of its lattice), so no gap crosses a layer's thickness with
 * the layer closed.  A contact that would need more than max_layers
 * stops the run (RC_ERR_CONSTRAINT), never passes silently.  Far
 * contacts (gap > eta1 + skin at the last neighbour-list build) hold no
 * certificate; each particle instead holds "moved less than skin/2 since
 * the build", whose failure rebuilds the list.
 *
 * Queue: an indexed binary heap over fixed slots (terms, particles'
 * displacement certificates, contacts), ordered by (time, slot): a total
 * order, so the run is bitwise reproducible and independent of the order
 * in which equal times were inserted.
 *
 * Output times are the multiples of dt: all particles are drifted there,
 * and the momentum written out is the leapfrog momentum less half the
 * impulse of every term ticking exactly at that time (velocity Verlet's
 * p(T)).  The run continues from its internal state unless the state was
 * changed from outside (rc_system_set_state), which restarts the clocks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "system_impl.h"
#include "../kernels/rc_avi.h"

enum { AVI_ONE = 0, AVI_SPRING = 1, AVI_ALL = 2 };

typedef struct avi_term {
    int kind;     /* AVI_ONE (particle i), AVI_SPRING (i, j), AVI_ALL */
    int pot;      /* index into sys->pot */
    int i, j;
    double h;
    long k;       /* next tick: T0 + k h */
} avi_term;

typedef struct avi_contact {
    int con;      /* index into sys->con */
    int i, j;     /* j = -1 for a particle against a fixed surface */
    double mu;    /* reduced mass (m_i for fixed surfaces) */
    int L;        /* open layers 1..L */
    int near;     /* holds a certificate */
    double tcert; /* certificate failure time (+inf: none) */
    long *k;      /* [max_layers] next tick of layer l at k[l-1] */
    int *lh;      /* [max_layers] open layers as a binary heap on (tick
                     time, l), so the next tick is found in O(1) */
    int *lp;      /* [max_layers] heap position of layer l at lp[l-1] */
    int nh;       /* layers in lh (= L) */
} avi_contact;

struct rc_avi_work {
    int n, d, nterm, ncont, nslot, max_layers;
    double T0, dt, skin;
    rc_k_layers lay;
    double *eta, *hl;    /* [max_layers + 2] by layer (1-based) */
    double *x, *p, *tc;  /* [n*d], [n*d], [n] particle state and clocks */
    double *xb;          /* [n*d] positions at the last list build */
    double *tdisp;       /* [n] displacement certificate times */
    double *g1;          /* [n*d] gradient scratch */
    avi_term *term;
    avi_contact *cont;
    long *kstore;        /* [ncont * max_layers] */
    int *lstore;         /* [2 * ncont * max_layers]: lh and lp */
    int *adj_start, *adj; /* CSR: near contacts of each particle */
    int *cur;            /* [n+1] fill cursor of the CSR build */
    int *heap, *pos;     /* [nslot] */
    double *key;         /* [nslot] */
    double *q_out, *p_out; /* what the last output wrote, to detect
                              rc_system_set_state */
    int started;
    rc_avi_stats st;
    char fail[256];
};

/* ------------------------------------------------------------------ */
/* Parameters.                                                         */

static double avi_default_eta1(const rc_system *sys)
{
    double rmin = INFINITY;
    int i;
    for (i = 0; i < sys->n; ++i)
        if (sys->radius[i] > 0.0 && sys->radius[i] < rmin)
            rmin = sys->radius[i];
    return isfinite(rmin) ? 0.05 * rmin : 1e-3;
}

void rc_avi_layers_(const rc_system *sys, rc_k_layers *L, int *max_layers)
{
    const rc_avi_desc *a = &sys->integ.avi;
    L->eta1 = a->eta1 > 0.0 ? a->eta1 : avi_default_eta1(sys);
    L->eexp = a->eta_exponent > 0.0 ? a->eta_exponent : 1.0;
    L->h1 = a->layer_step > 0.0 ? a->layer_step : sys->integ.dt;
    L->pexp = a->stiffness_exponent > 0.0 ? a->stiffness_exponent : 3.0;
    L->c = a->layer_resolution > 0.0 ? a->layer_resolution : 0.1;
    *max_layers = a->max_layers > 0 ? a->max_layers : 64;
}

static double avi_step_of(const rc_system *sys, int type)
{
    const rc_avi_desc *a = &sys->integ.avi;
    double h = 0.0;
    switch (type) {
    case RC_K_GRAVITY: h = a->gravity_step; break;
    case RC_K_SPRING: h = a->spring_step; break;
    case RC_K_ANCHOR: h = a->anchor_step; break;
    case RC_K_LJ:
    case RC_K_WCA: h = a->pair_step; break;
    default: h = a->external_step; break;
    }
    return h > 0.0 ? h : sys->integ.dt;
}

static double avi_mu(const rc_system *sys, const rc_k_constraint *c)
{
    if (c->type == RC_K_NON_OVERLAP)
        return sys->mass[c->i] * sys->mass[c->j] /
               (sys->mass[c->i] + sys->mass[c->j]);
    return sys->mass[c->i];
}

/* Energy of all layers at q: sum over inequality terms and layers l with
 * g < eta_l.  Stateless: it is the potential the layers integrate (an
 * open layer with g >= eta_l adds 0; a closed one has g > eta_l). */
double rc_avi_layer_energy_(const rc_system *sys, const double *q)
{
    rc_k_layers L;
    int maxl, c, l, idx[2];
    double e = 0.0, g, grad[2][3];
    rc_avi_layers_(sys, &L, &maxl);
    for (c = 0; c < sys->ncon; ++c) {
        const rc_k_constraint *k = sys->con + c;
        double mu;
        if (rc_k_constraint_is_equality(k))
            continue;
        rc_k_constraint_eval(k, sys->dim, q, sys->radius, &g, idx, grad);
        if (!(g < L.eta1))
            continue;
        mu = avi_mu(sys, k);
        for (l = 1; l <= maxl; ++l) {
            double eta = rc_k_layer_eta(&L, l), h = rc_k_layer_step(&L, l);
            if (!(g < eta))
                break;
            e += rc_k_layer_energy(eta, rc_k_layer_stiffness(&L, mu, h), g,
                                   NULL);
        }
    }
    return e;
}

rc_status rc_avi_check_initial_(rc_system *sys)
{
    int c, idx[2];
    double g, grad[2][3];
    for (c = 0; c < sys->ncon; ++c) {
        if (rc_k_constraint_is_equality(sys->con + c))
            continue;
        rc_k_constraint_eval(sys->con + c, sys->dim, sys->q, sys->radius, &g,
                             idx, grad);
        if (!(g > 0.0)) {
            sys->start_term = c;
            return rc_fail_(sys, RC_ERR_INVALID,
                            "method avi: %s term %d starts with gap %g; "
                            "its penalty layers need a positive gap at the "
                            "start (move the particles apart)",
                            rc_constraint_type_name(
                                (rc_constraint_type)sys->con[c].type),
                            c, g);
        }
    }
    return RC_OK;
}

/* ------------------------------------------------------------------ */
/* Indexed heap over slots, ordered by (key, slot).                    */

static int avi_less(const struct rc_avi_work *w, int a, int b)
{
    double ka = w->key[a], kb = w->key[b];
    return ka < kb || (ka == kb && a < b);
}

static void avi_swap(struct rc_avi_work *w, int i, int j)
{
    int a = w->heap[i], b = w->heap[j];
    w->heap[i] = b;
    w->heap[j] = a;
    w->pos[b] = i;
    w->pos[a] = j;
}

static void avi_sift(struct rc_avi_work *w, int i)
{
    int n = w->nslot;
    while (i > 0 && avi_less(w, w->heap[i], w->heap[(i - 1) / 2])) {
        avi_swap(w, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && avi_less(w, w->heap[l], w->heap[m]))
            m = l;
        if (r < n && avi_less(w, w->heap[r], w->heap[m]))
            m = r;
        if (m == i)
            break;
        avi_swap(w, i, m);
        i = m;
    }
}

static void avi_set_key(struct rc_avi_work *w, int slot, double t)
{
    w->key[slot] = t;
    avi_sift(w, w->pos[slot]);
}

/* ------------------------------------------------------------------ */

static double avi_term_time(const struct rc_avi_work *w, const avi_term *t)
{
    return w->T0 + (double)t->k * t->h;
}

static double avi_layer_time(const struct rc_avi_work *w, const avi_contact *c,
                             int l)
{
    return w->T0 + (double)c->k[l - 1] * w->hl[l];
}

/* Position of particle i at time t (not stored). */
static void avi_pos_at(const rc_system *sys, const struct rc_avi_work *w,
                       int i, double t, double *out)
{
    int k, d = w->d;
    double dt = t - w->tc[i];
    for (k = 0; k < d; ++k)
        out[k] = w->x[i * d + k] + dt * w->p[i * d + k] * sys->inv_mass[i];
}

static void avi_drift(const rc_system *sys, struct rc_avi_work *w, int i,
                      double t)
{
    if (w->tc[i] != t) {
        avi_pos_at(sys, w, i, t, w->x + (long)i * w->d);
        w->tc[i] = t;
    }
}

static void avi_drift_all(const rc_system *sys, struct rc_avi_work *w,
                          double t)
{
    int i;
    for (i = 0; i < w->n; ++i)
        avi_drift(sys, w, i, t);
}

/* The open layers of one contact as a binary heap on (tick time, l). */
static int avi_lless(const struct rc_avi_work *w, const avi_contact *c, int a,
                     int b)
{
    double ta = avi_layer_time(w, c, a), tb = avi_layer_time(w, c, b);
    return ta < tb || (ta == tb && a < b);
}

static void avi_lswap(avi_contact *c, int i, int j)
{
    int a = c->lh[i], b = c->lh[j];
    c->lh[i] = b;
    c->lh[j] = a;
    c->lp[b - 1] = i;
    c->lp[a - 1] = j;
}

static void avi_lsift(const struct rc_avi_work *w, avi_contact *c, int i)
{
    while (i > 0 && avi_lless(w, c, c->lh[i], c->lh[(i - 1) / 2])) {
        avi_lswap(c, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < c->nh && avi_lless(w, c, c->lh[l], c->lh[m]))
            m = l;
        if (r < c->nh && avi_lless(w, c, c->lh[r], c->lh[m]))
            m = r;
        if (m == i)
            break;
        avi_lswap(c, i, m);
        i = m;
    }
}

static void avi_lpush(const struct rc_avi_work *w, avi_contact *c, int l)
{
    c->lh[c->nh] = l;
    c->lp[l - 1] = c->nh;
    c->nh++;
    avi_lsift(w, c, c->nh - 1);
}

static void avi_lremove(const struct rc_avi_work *w, avi_contact *c, int l)
{
    int i = c->lp[l - 1];
    c->nh--;
    if (i != c->nh) {
        avi_lswap(c, i, c->nh);
        avi_lsift(w, c, i);
    }
    c->lp[l - 1] = -1;
}

/* Next event of contact c: its certificate or its next layer tick. */
static double avi_cont_key(const struct rc_avi_work *w, const avi_contact *c)
{
    double t = c->tcert;
    if (c->nh > 0) {
        double tl = avi_layer_time(w, c, c->lh[0]);
        if (tl < t)
            t = tl;
    }
    return t;
}

/* Recompute the certificate of contact c at time t: the first time its
 * gap reaches eta_{L+1} under the current linear motion. */
static void avi_certify(const rc_system *sys, struct rc_avi_work *w,
                        int ci, double t)
{
    avi_contact *c = w->cont + ci;
    const rc_k_constraint *k = sys->con + c->con;
    int d = w->d, a;
    double xi[3], xj[3], x[3], v[3], target, tau = INFINITY;
    w->st.certificates++;
    if (!c->near) {
        c->tcert = INFINITY;
    } else {
        /* aim a hair above the layer so rounding can only open it early */
        target = w->eta[c->L + 1] * (1.0 + 1e-9);
        avi_pos_at(sys, w, c->i, t, xi);
        if (c->j >= 0)
            avi_pos_at(sys, w, c->j, t, xj);
        for (a = 0; a < d; ++a) {
            double vi = w->p[c->i * d + a] * sys->inv_mass[c->i];
            double vj = c->j >= 0 ? w->p[c->j * d + a] * sys->inv_mass[c->j]
                                  : 0.0;
            x[a] = c->j >= 0 ? xi[a] - xj[a] : xi[a] - k->a[a];
            v[a] = vi - vj;
        }
        switch (k->type) {
        case RC_K_NON_OVERLAP:
            tau = rc_k_cert_radial(d, x, v,
                                   sys->radius[c->i] + sys->radius[c->j] +
                                       target, 1);
            break;
        case RC_K_OBSTACLE:
            tau = rc_k_cert_radial(d, x, v,
                                   k->a[3] + sys->radius[c->i] + target, 1);
            break;
        case RC_K_CONTAINER:
            tau = rc_k_cert_radial(d, x, v,
                                   k->a[3] - sys->radius[c->i] - target, 0);
            break;
        default: { /* wall: g = n.x - offset - r */
            double gv = rc_dot(d, k->a, xi) - k->a[3] - sys->radius[c->i];
            tau = rc_k_cert_linear(gv, rc_dot(d, k->a, v), target);
            break;
        }
        }
        c->tcert = t + tau * (1.0 - 1e-12);
        if (c->tcert < t)
            c->tcert = t;
    }
    avi_set_key(w, w->nterm + w->n + ci, avi_cont_key(w, c));
}

static void avi_certify_disp(const rc_system *sys, struct rc_avi_work *w,
                             int i, double t)
{
    double x[3], v[3], tau;
    int a, d = w->d;
    if (w->ncont == 0)
        return;
    avi_pos_at(sys, w, i, t, x);
    for (a = 0; a < d; ++a) {
        x[a] -= w->xb[i * d + a];
        v[a] = w->p[i * d + a] * sys->inv_mass[i];
    }
    tau = rc_k_cert_radial(d, x, v, 0.5 * w->skin * (1.0 - 1e-9), 0);
    w->tdisp[i] = t + tau;
    avi_set_key(w, w->nterm + i, w->tdisp[i]);
}

/* Everything that depends on the momentum of particle i. */
static void avi_touched(const rc_system *sys, struct rc_avi_work *w, int i,
                        double t)
{
    int s;
    for (s = w->adj_start[i]; s < w->adj_start[i + 1]; ++s)
        avi_certify(sys, w, w->adj[s], t);
    avi_certify_disp(sys, w, i, t);
}

/* Neighbour list: contacts with gap < eta1 + skin (and every contact with
 * an open layer) are near.  All particles are synchronised at t. */
static rc_status avi_rebuild(rc_system *sys, struct rc_avi_work *w, double t)
{
    int c, i, idx[2];
    double g, grad[2][3];
    avi_drift_all(sys, w, t);
    memcpy(w->xb, w->x, sizeof(double) * (size_t)w->n * (size_t)w->d);
    w->st.rebuilds++;
    memset(w->adj_start, 0, sizeof(int) * (size_t)(w->n + 1));
    for (c = 0; c < w->ncont; ++c) {
        avi_contact *ct = w->cont + c;
        rc_k_constraint_eval(sys->con + ct->con, w->d, w->x, sys->radius, &g,
                             idx, grad);
        ct->near = ct->L > 0 || g < w->eta[1] + w->skin;
        if (ct->near) {
            w->adj_start[ct->i + 1]++;
            if (ct->j >= 0)
                w->adj_start[ct->j + 1]++;
        }
    }
    for (i = 0; i < w->n; ++i)
        w->adj_start[i + 1] += w->adj_start[i];
    {
        /* fill with a running cursor per particle, contacts in index
         * order: a deterministic order */
        int *cur = w->cur;
        memcpy(cur, w->adj_start, sizeof(int) * (size_t)(w->n + 1));
        for (c = 0; c < w->ncont; ++c) {
            avi_contact *ct = w->cont + c;
            if (!ct->near)
                continue;
            w->adj[cur[ct->i]++] = c;
            if (ct->j >= 0)
                w->adj[cur[ct->j]++] = c;
        }
    }
    for (c = 0; c < w->ncont; ++c)
        avi_certify(sys, w, c, t);
    for (i = 0; i < w->n; ++i)
        avi_certify_disp(sys, w, i, t);
    return RC_OK;
}

void rc_avi_free_(rc_system *sys)
{
    struct rc_avi_work *w = sys->avi;
    if (!w)
        return;
    free(w->eta);
    free(w->hl);
    free(w->x);
    free(w->p);
    free(w->tc);
    free(w->xb);
    free(w->tdisp);
    free(w->g1);
    free(w->term);
    free(w->cont);
    free(w->kstore);
    free(w->lstore);
    free(w->adj_start);
    free(w->adj);
    free(w->cur);
    free(w->heap);
    free(w->pos);
    free(w->key);
    free(w->q_out);
    free(w->p_out);
    free(w);
    sys->avi = NULL;
}

/* The model of one potential term alone, so that the shared bodies give
 * its gradient. */
static rc_k_model avi_term_model(const rc_system *sys, const avi_term *t)
{
    rc_k_model m = rc_system_model_(sys);
    m.npot = 1;
    m.pot = sys->pot + t->pot;
    return m;
}

/* Kick the particles of term t by -scale grad V_t at the current x (the
 * stencil must be drifted to one time).  Writes the kick into dst
 * (sys->p layout). */
static void avi_kick_term(const rc_system *sys, struct rc_avi_work *w,
                          const avi_term *t, double scale, double *dst)
{
    rc_k_model m = avi_term_model(sys, t);
    int a, d = w->d, i;
    double g[3];
    if (t->kind == AVI_ALL) {
        for (i = 0; i < w->n; ++i)
            rc_k_gradient_particle(m, w->x, i, w->g1 + (long)i * d);
        for (i = 0; i < w->n; ++i)
            for (a = 0; a < d; ++a)
                dst[i * d + a] -= scale * w->g1[i * d + a];
        return;
    }
    rc_k_gradient_particle(m, w->x, t->i, g);
    for (a = 0; a < d; ++a)
        dst[t->i * d + a] -= scale * g[a];
    if (t->kind == AVI_SPRING) {
        rc_k_gradient_particle(m, w->x, t->j, g);
        for (a = 0; a < d; ++a)
            dst[t->j * d + a] -= scale * g[a];
    }
}

/* Layer l of contact c at the current (synchronised) positions: applies
 * the impulse scale * k_l (eta_l - g) grad g into dst; returns g. */
static double avi_kick_layer(const rc_system *sys, struct rc_avi_work *w,
                             const avi_contact *c, int l, double scale,
                             double *dst, double *impulse)
{
    int idx[2], nb, b, a, d = w->d;
    double g, grad[2][3], f, k = rc_k_layer_stiffness(&w->lay, c->mu, w->hl[l]);
    nb = rc_k_constraint_eval(sys->con + c->con, d, w->x, sys->radius, &g,
                              idx, grad);
    rc_k_layer_energy(w->eta[l], k, g, &f);
    *impulse = scale * f;
    if (f != 0.0)
        for (b = 0; b < nb; ++b)
            for (a = 0; a < d; ++a)
                dst[idx[b] * d + a] += scale * f * grad[b][a];
    return g;
}

static rc_status avi_alloc(rc_system *sys)
{
    struct rc_avi_work *w;
    int n = sys->n, d = sys->dim, c, t, i, l, nterm = 0, ncont = 0, maxl;
    rc_k_layers lay;
    size_t N = (size_t)(n > 0 ? n : 1) * (size_t)d;
    rc_avi_free_(sys);
    rc_avi_layers_(sys, &lay, &maxl);
    for (c = 0; c < sys->ncon; ++c) {
        if (rc_k_constraint_is_equality(sys->con + c))
            return rc_fail_(sys, RC_ERR_UNSUPPORTED,
                            "method avi cannot hold equality constraints "
                            "(%s): its contacts are penalty layers",
                            rc_constraint_type_name(
                                (rc_constraint_type)sys->con[c].type));
        ncont++;
    }
    for (t = 0; t < sys->npot; ++t) {
        const rc_k_potential *p = sys->pot + t;
        if (p->type == RC_K_SPRING || p->type == RC_K_LJ ||
            p->type == RC_K_WCA)
            nterm++;
        else
            nterm += p->i < 0 ? n : 1;
    }
    w = (struct rc_avi_work *)calloc(1, sizeof *w);
    if (!w)
        return rc_fail_(sys, RC_ERR_NOMEM, "avi: out of memory");
    sys->avi = w;
    w->n = n;
    w->d = d;
    w->nterm = nterm;
    w->ncont = ncont;
    w->nslot = nterm + n + ncont;
    w->max_layers = maxl;
    w->lay = lay;
    w->dt = sys->integ.dt;
    w->eta = (double *)calloc((size_t)maxl + 2, sizeof(double));
    w->hl = (double *)calloc((size_t)maxl + 2, sizeof(double));
    w->x = (double *)calloc(N, sizeof(double));
    w->p = (double *)calloc(N, sizeof(double));
    w->xb = (double *)calloc(N, sizeof(double));
    w->g1 = (double *)calloc(N, sizeof(double));
    w->q_out = (double *)calloc(N, sizeof(double));
    w->p_out = (double *)calloc(N, sizeof(double));
    w->tc = (double *)calloc((size_t)n + 1, sizeof(double));
    w->tdisp = (double *)calloc((size_t)n + 1, sizeof(double));
    w->term = (avi_term *)calloc((size_t)nterm + 1, sizeof(avi_term));
    w->cont = (avi_contact *)calloc((size_t)ncont + 1, sizeof(avi_contact));
    w->kstore = (long *)calloc((size_t)ncont * (size_t)maxl + 1, sizeof(long));
    w->lstore = (int *)calloc((size_t)ncont * (size_t)maxl * 2 + 1,
                              sizeof(int));
    w->adj_start = (int *)calloc((size_t)n + 2, sizeof(int));
    w->adj = (int *)calloc((size_t)ncont * 2 + 1, sizeof(int));
    w->cur = (int *)calloc((size_t)n + 2, sizeof(int));
    w->heap = (int *)calloc((size_t)w->nslot + 1, sizeof(int));
    w->pos = (int *)calloc((size_t)w->nslot + 1, sizeof(int));
    w->key = (double *)calloc((size_t)w->nslot + 1, sizeof(double));
    if (!w->eta || !w->hl || !w->x || !w->p || !w->xb || !w->g1 ||
        !w->q_out || !w->p_out || !w->tc || !w->tdisp || !w->term ||
        !w->cont || !w->kstore || !w->lstore || !w->adj_start || !w->adj || !w->cur ||
        !w->heap ||
        !w->pos || !w->key) {
        rc_avi_free_(sys);
        return rc_fail_(sys, RC_ERR_NOMEM,
                        "avi: out of memory for %d contacts x %d layers",
                        ncont, maxl);
    }
    for (l = 1; l <= maxl + 1; ++l) {
        w->eta[l] = rc_k_layer_eta(&lay, l);
        w->hl[l] = rc_k_layer_step(&lay, l);
    }
    i = 0;
    for (t = 0; t < sys->npot; ++t) {
        const rc_k_potential *p = sys->pot + t;
        double h = avi_step_of(sys, p->type);
        if (p->type == RC_K_SPRING || p->type == RC_K_LJ ||
            p->type == RC_K_WCA) {
            avi_term *e = w->term + i++;
            e->kind = p->type == RC_K_SPRING ? AVI_SPRING : AVI_ALL;
            e->pot = t;
            e->i = p->i;
            e->j = p->j;
            e->h = h;
        } else {
            int a, lo = p->i < 0 ? 0 : p->i, hi = p->i < 0 ? n : p->i + 1;
            for (a = lo; a < hi; ++a) {
                avi_term *e = w->term + i++;
                e->kind = AVI_ONE;
                e->pot = t;
                e->i = a;
                e->j = -1;
                e->h = h;
            }
        }
    }
    i = 0;
    for (c = 0; c < sys->ncon; ++c) {
        avi_contact *ct = w->cont + i;
        const rc_k_constraint *k = sys->con + c;
        ct->con = c;
        ct->i = k->i;
        ct->j = k->type == RC_K_NON_OVERLAP ? k->j : -1;
        ct->mu = avi_mu(sys, k);
        ct->k = w->kstore + (size_t)i * (size_t)maxl;
        ct->lh = w->lstore + (size_t)i * (size_t)maxl * 2;
        ct->lp = ct->lh + maxl;
        ++i;
    }
    {
        double rs = 0.0;
        int cnt = 0;
        for (i = 0; i < n; ++i)
            if (sys->radius[i] > 0.0) {
                rs += sys->radius[i];
                cnt++;
            }
        w->skin = sys->integ.avi.skin > 0.0
                      ? sys->integ.avi.skin
                      : fmax(cnt ? 0.5 * rs / cnt : 0.0, 4.0 * lay.eta1);
    }
    return RC_OK;
}

/* Start (or restart) from sys->q, sys->p at sys->time: half kicks of
 * every term and of every layer open at the start, then the queue. */
static rc_status avi_start(rc_system *sys)
{
    struct rc_avi_work *w = sys->avi;
    int n = w->n, d = w->d, t, c, s, l;
    size_t bytes = sizeof(double) * (size_t)n * (size_t)d;
    rc_status st;
    double imp;
    w->T0 = sys->time;
    if (bytes) {
        memcpy(w->x, sys->q, bytes);
        memcpy(w->p, sys->p, bytes);
    }
    for (s = 0; s < n; ++s)
        w->tc[s] = w->T0;
    for (t = 0; t < w->nterm; ++t) {
        avi_kick_term(sys, w, w->term + t, 0.5 * w->term[t].h, w->p);
        w->term[t].k = 1;
    }
    for (c = 0; c < w->ncont; ++c) {
        avi_contact *ct = w->cont + c;
        int idx[2];
        double g, grad[2][3];
        rc_k_constraint_eval(sys->con + ct->con, d, w->x, sys->radius, &g,
                             idx, grad);
        if (!(g > 0.0))
            return rc_fail_(sys, RC_ERR_CONSTRAINT,
                            "avi: %s term %d starts with gap %g <= 0; the "
                            "penalty layers need a positive gap",
                            rc_constraint_type_name(
                                (rc_constraint_type)sys->con[ct->con].type),
                            ct->con, g);
        ct->L = 0;
        ct->nh = 0;
        ct->tcert = INFINITY;
        while (ct->L < w->max_layers && g < w->eta[ct->L + 1]) {
            ct->L++;
            ct->k[ct->L - 1] = 1;
            avi_lpush(w, ct, ct->L);
        }
        if (ct->L == w->max_layers && g < w->eta[ct->L + 1])
            return rc_fail_(sys, RC_ERR_CONSTRAINT,
                            "avi: term %d starts deeper than max_layers "
                            "(%d) penalty layers (gap %g)",
                            ct->con, w->max_layers, g);
        for (l = 1; l <= ct->L; ++l)
            avi_kick_layer(sys, w, ct, l, 0.5 * w->hl[l], w->p, &imp);
    }
    /* the heap: every slot, keys filled below; insertion order is the
     * slot order or (tests) its reverse, which must not matter */
    for (s = 0; s < w->nslot; ++s) {
        int slot = sys->integ.avi.reverse_insertion ? w->nslot - 1 - s : s;
        w->heap[s] = slot;
        w->pos[slot] = s;
        w->key[slot] = INFINITY;
    }
    for (t = 0; t < w->nterm; ++t)
        avi_set_key(w, t, avi_term_time(w, w->term + t));
    for (s = 0; s < n; ++s)
        w->tdisp[s] = INFINITY;
    if ((st = avi_rebuild(sys, w, w->T0)) != RC_OK)
        return st;
    w->started = 1;
    return RC_OK;
}

static rc_status avi_unsafe(rc_system *sys, struct rc_avi_work *w,
                            const avi_contact *c, double g, double t)
{
    (void)w;
    return rc_fail_(sys, RC_ERR_CONSTRAINT,
                    "avi: %s term %d (particles %d, %d) %s at t = %.17g "
                    "(gap %g); raise integrator.avi.max_layers or eta1, or "
                    "lower layer_step",
                    rc_constraint_type_name(
                        (rc_constraint_type)sys->con[c->con].type),
                    c->con, c->i, c->j,
                    g <= 0.0 ? "reached gap <= 0"
                             : "needed more than max_layers layers",
                    t, g);
}

/* One contact event at time t: a layer tick or a certificate failure. */
static rc_status avi_contact_event(rc_system *sys, struct rc_avi_work *w,
                                   int ci, double t)
{
    avi_contact *c = w->cont + ci;
    int which = 0;
    double imp, g;
    /* the heap's top is the smallest l among the layers due at t */
    if (c->nh > 0 && avi_layer_time(w, c, c->lh[0]) == t)
        which = c->lh[0];
    avi_drift(sys, w, c->i, t);
    if (c->j >= 0)
        avi_drift(sys, w, c->j, t);
    if (which) {
        g = avi_kick_layer(sys, w, c, which, w->hl[which], w->p, &imp);
        w->st.ticks++;
        w->st.layer_ticks[which - 1 < RC_AVI_STATS_LAYERS
                              ? which - 1
                              : RC_AVI_STATS_LAYERS - 1]++;
        if (g < w->st.min_gap)
            w->st.min_gap = g;
        if (!(g > 0.0))
            return avi_unsafe(sys, w, c, g, t);
        c->k[which - 1]++;
        if (which == c->L && !(g < w->eta[which])) {
            c->L--; /* retire the deepest layer; its certificate reopens it */
            avi_lremove(w, c, which);
        } else {
            avi_lsift(w, c, c->lp[which - 1]);
        }
        if (imp != 0.0) {
            avi_touched(sys, w, c->i, t);
            if (c->j >= 0)
                avi_touched(sys, w, c->j, t);
        } else {
            avi_certify(sys, w, ci, t);
        }
        return RC_OK;
    }
    /* certificate failure: open layer L+1 on its lattice, after t */
    {
        int idx[2];
        double grad[2][3];
        rc_k_constraint_eval(sys->con + c->con, w->d, w->x, sys->radius, &g,
                             idx, grad);
        if (c->L >= w->max_layers || !(g > 0.0))
            return avi_unsafe(sys, w, c, g, t);
        c->L++;
        c->k[c->L - 1] = (long)floor((t - w->T0) / w->hl[c->L]) + 1;
        avi_lpush(w, c, c->L);
        w->st.activations++;
        if (c->L > w->st.deepest_layer)
            w->st.deepest_layer = c->L;
        avi_certify(sys, w, ci, t);
    }
    return RC_OK;
}

static rc_status avi_term_event(rc_system *sys, struct rc_avi_work *w, int ti,
                                double t)
{
    avi_term *e = w->term + ti;
    int i;
    if (e->kind == AVI_ALL)
        avi_drift_all(sys, w, t);
    else {
        avi_drift(sys, w, e->i, t);
        if (e->kind == AVI_SPRING)
            avi_drift(sys, w, e->j, t);
    }
    avi_kick_term(sys, w, e, e->h, w->p);
    e->k++;
    w->st.ticks++;
    w->st.term_ticks++;
    avi_set_key(w, ti, avi_term_time(w, e));
    if (e->kind == AVI_ALL) {
        for (i = 0; i < w->n; ++i)
            avi_touched(sys, w, i, t);
    } else {
        avi_touched(sys, w, e->i, t);
        if (e->kind == AVI_SPRING)
            avi_touched(sys, w, e->j, t);
    }
    return RC_OK;
}

static int avi_state_changed(const rc_system *sys, const struct rc_avi_work *w)
{
    size_t bytes = sizeof(double) * (size_t)w->n * (size_t)w->d;
    return memcmp(sys->q, w->q_out, bytes) || memcmp(sys->p, w->p_out, bytes);
}

rc_status rc_step_avi_(rc_system *sys)
{
    struct rc_avi_work *w = sys->avi;
    rc_status st;
    double T = (double)(sys->steps + 1) * sys->integ.dt;
    double eps;
    int i, c, l, d;
    if (!w || w->n != sys->n || w->dt != sys->integ.dt) {
        if ((st = avi_alloc(sys)) != RC_OK)
            return st;
        w = sys->avi;
        w->st.min_gap = INFINITY;
    }
    if (!w->started || avi_state_changed(sys, w))
        if ((st = avi_start(sys)) != RC_OK)
            return st;
    d = w->d;
    /* ticks within eps of T belong to T: velocity Verlet's p(T) below */
    eps = 1e-12 * (fabs(T) + w->dt);
    while (w->nslot > 0 && w->key[w->heap[0]] < T - eps) {
        int s = w->heap[0];
        double t = w->key[s];
        if (!isfinite(t))
            break;
        if (s < w->nterm)
            st = avi_term_event(sys, w, s, t);
        else if (s < w->nterm + w->n)
            st = avi_rebuild(sys, w, t);
        else
            st = avi_contact_event(sys, w, s - w->nterm - w->n, t);
        if (st != RC_OK) {
            w->started = 0; /* the next step restarts from sys->q, p */
            return st;
        }
    }
    avi_drift_all(sys, w, T);
    for (i = 0; i < w->n * d; ++i)
        if (!isfinite(w->x[i]) || !isfinite(w->p[i])) {
            w->started = 0;
            return rc_fail_(sys, RC_ERR_NONFINITE,
                            "avi: state became non-finite by t = %g; a "
                            "potential's step is probably too large",
                            T);
        }
    /* output: x, and p less half of every impulse due exactly at T */
    memcpy(sys->q, w->x, sizeof(double) * (size_t)w->n * (size_t)d);
    memcpy(sys->p, w->p, sizeof(double) * (size_t)w->n * (size_t)d);
    for (i = 0; i < w->nterm; ++i)
        if (fabs(avi_term_time(w, w->term + i) - T) <= eps)
            avi_kick_term(sys, w, w->term + i, 0.5 * w->term[i].h, sys->p);
    w->st.active_contacts = 0;
    w->st.active_layers = 0;
    for (c = 0; c < w->ncont; ++c) {
        avi_contact *ct = w->cont + c;
        double imp;
        if (ct->L > 0) {
            w->st.active_contacts++;
            w->st.active_layers += ct->L;
        }
        for (l = 1; l <= ct->L; ++l)
            if (fabs(avi_layer_time(w, ct, l) - T) <= eps)
                avi_kick_layer(sys, w, ct, l, 0.5 * w->hl[l], sys->p, &imp);
    }
    memcpy(w->q_out, sys->q, sizeof(double) * (size_t)w->n * (size_t)d);
    memcpy(w->p_out, sys->p, sizeof(double) * (size_t)w->n * (size_t)d);
    sys->last_active = w->st.active_contacts;
    sys->last_reflections = 0;
    sys->last_iterations = 0;
    return RC_OK;
}

rc_status rc_system_avi_stats(const rc_system *sys, rc_avi_stats *out)
{
    if (!sys || !out)
        return RC_ERR_INVALID;
    if (!sys->have_integrator || sys->integ.method != RC_METHOD_AVI ||
        !sys->avi)
        return RC_ERR_STATE;
    *out = sys->avi->st;
    return RC_OK;
}
