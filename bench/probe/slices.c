/*
 * slices.c - where the CPU time of an oversubscribed job goes, seen from inside the
 * ranks. An LD_PRELOAD library (any MPI, through the PMPI names) that records, per
 * rank, every sched_yield (with the CPU it returns on) and every MPI_Waitall return,
 * and writes them at MPI_Finalize to $SLICES_DIR/slices.<rank> (default /tmp).
 * bench/probe/slices.py turns the files into slices per iteration, fruitless slices
 * (a rank ran and finished no MPI_Waitall) and time in and between slices.
 *
 *   mpicc -O2 -shared -fPIC bench/probe/slices.c -o /tmp/slices.so -ldl
 *   mpiexec -n 8 -genv LD_PRELOAD /tmp/slices.so bench/build/oxmpi/ring -s 8 -i 20000 -r 1
 *   python3 bench/probe/slices.py /tmp
 *
 * (Open MPI: mpiexec -x LD_PRELOAD=/tmp/slices.so ..., compiled with its mpicc.)
 * Each event costs two clock reads, so absolute times are a little inflated.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_EVENTS 4000000

static unsigned long long when[MAX_EVENTS];
static char what[MAX_EVENTS];
static long nevents;
static int recording;

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void record(char c)
{
    if (recording && nevents < MAX_EVENTS) {
        when[nevents] = now_ns();
        what[nevents++] = c;
    }
}

int sched_yield(void)
{
    static int (*real)(void);
    if (!real)
        real = (int (*)(void))dlsym(RTLD_NEXT, "sched_yield");
    record('Y');
    int rc = real();
    int cpu = sched_getcpu();
    record(cpu >= 0 && cpu < 10 ? (char)('0' + cpu) : '?');
    return rc;
}

int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *st)
{
    int rc = PMPI_Waitall(n, reqs, st);
    record('W');
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    recording = 1;
    return rc;
}

int MPI_Finalize(void)
{
    int rank;
    char path[4096];
    const char *dir = getenv("SLICES_DIR");
    recording = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/slices.%d", dir ? dir : "/tmp", rank);
    FILE *f = fopen(path, "w");
    if (f) {
        for (long i = 0; i < nevents; i++)
            fprintf(f, "%llu %c\n", when[i], what[i]);
        fclose(f);
    } else {
        perror(path);
    }
    return PMPI_Finalize();
}
