/* omp_wait.c — on a busy machine, OpenMP threads wait by sleeping, not by spinning.
 *
 * oneDNN's CPU runtime here is OpenMP (libgomp). With OMP_WAIT_POLICY unset, a libgomp
 * thread that waits for work spins (about 300000 pause instructions, milliseconds) before
 * it sleeps. On a quiet machine that is what makes back-to-back primitives fast. On an
 * oversubscribed one the spinning thread holds a core the thread it waits for needs, and
 * runs collapse: mobilenet_v2 fused at 2 threads on 2 cores, load average 18, took 330 to
 * 1640 ms a run with the default policy, 123-134 ms with GOMP_SPINCOUNT=10000 and 31-36 ms
 * with OMP_WAIT_POLICY=passive; quiet, the same run takes 2.9 ms by default and 4.1 ms
 * passive (whole-run medians of `graphlab profile`, 2026-12-06). So: passive when the
 * machine is busier than it has processors, the default otherwise, and the user's own
 * setting of either variable always wins.
 *
 * libgomp reads its environment once, in its library constructor, before main, and the C
 * library only sets up the environment after the executable's earliest hooks run: the
 * one way to give libgomp another policy is to start again with it. So main calls
 * gl_omp_wait_choose first thing, for the commands that run graphs on oneDNN's threads:
 * on a busy machine (1-minute load average at or above the processors this process may
 * use) it executes the program again, same arguments, with OMP_WAIT_POLICY=passive and
 * GRAPHLAB_OMP_WAIT saying why, which `gl_omp_wait_note` turns into the sentence
 * `profile` prints, so a timing taken passively says so. That costs one more start of
 * the program, only on a busy machine.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "exec/omp_wait.h"
#include "util/plural.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Carries the load and processor count to the program started again. */
#define CHOSEN_VAR "GRAPHLAB_OMP_WAIT"

static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

void gl_omp_wait_choose(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return; /* the user's choice, or already chosen */
    double load[1];
    if (getloadavg(load, 1) != 1)
        return;
    int cpus = usable_cpus();
    if (load[0] < cpus)
        return;
    char why[64];
    snprintf(why, sizeof(why), "%.1f %d", load[0], cpus);
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0 && setenv(CHOSEN_VAR, why, 1) == 0)
        execv("/proc/self/exe", argv);
    unsetenv("OMP_WAIT_POLICY"); /* not started again: as it was */
    unsetenv(CHOSEN_VAR);
}

bool gl_omp_wait_note(char *out, size_t len)
{
    const char *why = getenv(CHOSEN_VAR), *policy = getenv("OMP_WAIT_POLICY");
    double load;
    int cpus;
    if (!why || !policy || strcmp(policy, "passive") != 0 || len == 0 ||
        sscanf(why, "%lf %d", &load, &cpus) != 2)
        return false;
    snprintf(out, len, "OpenMP threads wait passively: the load average was %.1f on %d %s "
             "(set OMP_WAIT_POLICY or GOMP_SPINCOUNT to choose)",
             load, cpus, gl_noun(cpus, "processor", "processors"));
    return true;
}
