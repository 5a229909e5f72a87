/* limits.c — the thread's current run limits, and the checks against them. */
#include "ir/limits.h"

#include "ir/tensor.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static _Thread_local gl_limits *current;
static atomic_uint next_id = 1;

void gl_limits_push(gl_limits *l)
{
    l->id = atomic_fetch_add(&next_id, 1);
    if (l->id == 0) /* wrapped: 0 means "not charged" */
        l->id = atomic_fetch_add(&next_id, 1);
    l->prev = current;
    current = l;
}

void gl_limits_pop(gl_limits *l)
{
    if (current == l)
        current = l->prev;
}

gl_limits *gl_limits_current(void) { return current; }

size_t gl_limits_default_bytes(void)
{
    /* Asked per constant-folded node: the answer does not change while we run. */
    static atomic_size_t known;
    size_t k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k)
        return k;
    const uint64_t cap = (uint64_t)1 << 40;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)4 << 30;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem)
        mem = rl.rlim_cur;
    mem /= 2;
    if (mem > cap)
        mem = cap;
    k = mem > SIZE_MAX ? SIZE_MAX : (size_t)mem;
    atomic_store_explicit(&known, k, memory_order_relaxed);
    return k;
}

/* Bytes of a dt tensor of dims; false when they overflow (true with 0 for dims that are
 * not a shape: gl_tensor_new says what is wrong with them). */
static bool tensor_bytes(gl_dtype dt, int rank, const int64_t *dims, size_t *bytes)
{
    size_t esize = dt == GL_DT_STRING ? sizeof(gl_bytes) : gl_dtype_size(dt);
    *bytes = 0;
    if (rank < 0 || rank > GL_MAX_RANK)
        return true;
    size_t n = esize;
    for (int i = 0; i < rank; i++)
        if (dims[i] <= 0) /* negative: not a shape; zero: empty */
            return true;
    for (int i = 0; i < rank; i++) {
        if ((uint64_t)dims[i] > SIZE_MAX / (n ? n : 1))
            return false;
        n *= (size_t)dims[i];
    }
    *bytes = n;
    return true;
}

/* " (--max-memory)", or "" when the limit has no option to name. */
static void option_said(const char *option, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", option ? " (" : "", option ? option : "", option ? ")" : "");
}

gl_status gl_limits_check_tensor(const char *where, const char *what, gl_dtype dt, int rank,
                                 const int64_t *dims)
{
    gl_limits *l = current;
    if (!l || !l->max_bytes)
        return GL_OK;
    size_t bytes;
    bool fits = tensor_bytes(dt, rank, dims, &bytes);
    if (fits && bytes <= l->max_bytes && l->live_bytes <= l->max_bytes - bytes)
        return GL_OK;
    l->refused = GL_ERR_NOMEM;
    char type[200];
    gl_format_type(dt, rank, dims, type, sizeof(type));
    where = where ? where : l->where ? l->where : "run";
    what = what ? what : "a tensor";
    if (!fits)
        return gl_fail(GL_ERR_NOMEM, "%s: %s %s is larger than memory can address", where,
                       what, type);
    char limit[100];
    option_said(l->max_bytes_option, limit, sizeof(limit));
    if (bytes > l->max_bytes)
        return gl_fail(GL_ERR_NOMEM, "%s: %s %s takes %zu bytes, over the memory limit%s of %zu "
                       "bytes", where, what, type, bytes, limit, l->max_bytes);
    return gl_fail(GL_ERR_NOMEM, "%s: %s %s (%zu bytes) would bring the tensors alive to %zu "
                   "bytes, over the memory limit%s of %zu bytes", where, what, type, bytes,
                   l->live_bytes + bytes, limit, l->max_bytes);
}

gl_status gl_limits_poll(const char *where)
{
    gl_limits *l = current;
    if (l && l->cancel && atomic_load_explicit(l->cancel, memory_order_relaxed))
        return gl_fail(GL_ERR_CANCELLED, "%s: cancelled", where ? where : "run");
    return GL_OK;
}

gl_status gl_limits_iteration(const char *where)
{
    gl_limits *l = current;
    if (!l)
        return GL_OK;
    if (l->max_iterations && ++l->iterations > l->max_iterations) {
        char cap[100];
        option_said(l->max_iterations_option, cap, sizeof(cap));
        return gl_fail(GL_ERR_INPUT, "%s: more than %" PRIu64 " loop iterations in this run%s",
                       where ? where : "run", l->max_iterations, cap);
    }
    return gl_limits_poll(where);
}

unsigned gl_limits_charge(size_t bytes)
{
    gl_limits *l = current;
    if (!l)
        return 0;
    l->live_bytes += bytes;
    if (l->live_bytes > l->peak_bytes)
        l->peak_bytes = l->live_bytes;
    return l->id;
}

void gl_limits_uncharge(unsigned id, size_t bytes)
{
    for (gl_limits *l = current; id && l; l = l->prev)
        if (l->id == id) {
            l->live_bytes = l->live_bytes > bytes ? l->live_bytes - bytes : 0;
            return;
        }
}
