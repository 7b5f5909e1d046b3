/*
 * c2c: median time of a cache-line round trip between two threads pinned on two CPUs
 * (default 0 and 1), in nanoseconds. bench/run records it before every benchmark job:
 * on shared or virtual machines it changes over time (on the 2-core development VM
 * between about 70 and 350 ns as the host moves the vCPUs), and every shared-memory
 * transfer between ranks on different CPUs follows it.
 *
 * Usage: c2c [CPU_A CPU_B]. Prints one number; exits 2 when a thread cannot be pinned.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 20000
#define BLOCKS 5

static _Alignas(128) atomic_long flag;
static atomic_int ready; /* 1: the peer runs on its CPU, 2: it could not be pinned */
static int cpu_b;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *peer(void *arg)
{
    (void)arg;
    if (pin(cpu_b) != 0) {
        atomic_store(&ready, 2);
        return NULL;
    }
    atomic_store(&ready, 1);
    for (long i = 0; i < (long)ROUNDS * BLOCKS; i++) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
    cpu_b = argc > 2 ? atoi(argv[2]) : 1;
    if (pin(cpu_a) != 0) {
        fprintf(stderr, "c2c: cannot run on CPU %d\n", cpu_a);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, peer, NULL) != 0)
        return 2;
    while (atomic_load(&ready) == 0)
        ;
    if (atomic_load(&ready) != 1) {
        pthread_join(t, NULL);
        fprintf(stderr, "c2c: cannot run on CPU %d\n", cpu_b);
        return 2;
    }
    double per[BLOCKS];
    long i = 0;
    for (int b = 0; b < BLOCKS; b++) {
        double t0 = now();
        for (long k = 0; k < ROUNDS; k++, i++) {
            atomic_store_explicit(&flag, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 2)
                ;
        }
        per[b] = (now() - t0) / ROUNDS;
    }
    pthread_join(t, NULL);
    qsort(per, BLOCKS, sizeof per[0], cmp);
    printf("%.1f\n", per[BLOCKS / 2]);
    return 0;
}
