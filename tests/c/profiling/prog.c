/*
 * The program the profiling tool watches. It makes a known number of calls of each kind
 * and then reads the tool's counters (found with dlsym, so the same program works with the
 * tool linked in, linked before -lmpi, or preloaded):
 * - every MPI_ call the program makes is counted exactly once;
 * - calls the program makes by their PMPI_ names are not counted;
 * - collectives (MPI_Bcast, MPI_Allreduce, MPI_Barrier) and MPI_Sendrecv do not show up as
 *   MPI_Send / MPI_Recv / MPI_Isend / MPI_Irecv / MPI_Wait calls (the library never calls its
 *   own interceptable names);
 * - MPI_Pcontrol reaches the tool with its level and extra arguments.
 * Each rank checks its own counts, including MPI_Finalize's after it returns; rank 0 prints
 * " No Errors" at the very end when its checks passed, and any rank that failed exits 1.
 * Without a tool it reports "tool not loaded" and exits 1 (run.sh checks that too).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long (*count_fn)(const char *);
static int errors;

static void expect(const char *name, long want)
{
    long got = count_fn(name);
    if (got != want) {
        fprintf(stderr, "%s counted %ld times, expected %ld\n", name, got, want);
        errors++;
    }
}

int main(int argc, char **argv)
{
    count_fn = (long (*)(const char *))dlsym(RTLD_DEFAULT, "oxtool_count");
    int (*level_fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "oxtool_pcontrol_level");
    if (!count_fn || !level_fn) {
        fprintf(stderr, "tool not loaded\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank); /* not counted */

    /* point-to-point around a ring (never relying on buffering, so it works on one rank):
     * 2 sends, 2 receives, 1 isend, 2 irecvs, 2 waits, 1 waitall, 1 sendrecv per rank */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, x = rank, y = -1;
    MPI_Request req[2];
    MPI_Status sts[1];
    for (int i = 0; i < 2; i++) {
        MPI_Irecv(&y, 1, MPI_INT, left, i, MPI_COMM_WORLD, &req[0]);
        MPI_Send(&x, 1, MPI_INT, right, i, MPI_COMM_WORLD);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    }
    MPI_Isend(&x, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &req[1]);
    MPI_Recv(&y, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(1, &req[1], sts);
    MPI_Sendrecv(&x, 1, MPI_INT, right, 6, &y, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (y != left) {
        fprintf(stderr, "rank %d: MPI_Sendrecv got %d from %d\n", rank, y, left);
        errors++;
    }
    /* calls by PMPI_ names the tool must not see */
    PMPI_Isend(&x, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Recv(&y, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    PMPI_Wait(&req[1], MPI_STATUS_IGNORE);

    /* collectives */
    long big[4096];
    for (int i = 0; i < 4096; i++) {
        big[i] = rank == 0 ? i : -1;
    }
    MPI_Bcast(big, 4096, MPI_LONG, 0, MPI_COMM_WORLD);
    if (big[4095] != 4095) {
        fprintf(stderr, "rank %d: MPI_Bcast gave %ld\n", rank, big[4095]);
        errors++;
    }
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "rank %d: MPI_Allreduce gave %d\n", rank, sum);
        errors++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Pcontrol(2, "phase", 1.5);

    expect("MPI_Init", 1);
    expect("MPI_Init_thread", 0);
    expect("MPI_Finalize", 0);
    expect("MPI_Comm_rank", 1);
    expect("MPI_Comm_size", 1);
    expect("MPI_Send", 2);
    expect("MPI_Recv", 2);
    expect("MPI_Isend", 1);
    expect("MPI_Irecv", 2);
    expect("MPI_Wait", 2);
    expect("MPI_Waitall", 1);
    expect("MPI_Sendrecv", 1);
    expect("MPI_Bcast", 1);
    expect("MPI_Allreduce", 1);
    expect("MPI_Barrier", 2);
    expect("MPI_Pcontrol", 1);
    if (level_fn() != 2) {
        fprintf(stderr, "MPI_Pcontrol level seen by the tool: %d\n", level_fn());
        errors++;
    }

    MPI_Finalize();
    expect("MPI_Finalize", 1);
    expect("MPI_Send", 2);
    expect("MPI_Recv", 2);
    if (errors) {
        fprintf(stderr, "rank %d: %d errors\n", rank, errors);
        return 1;
    }
    if (rank == 0) {
        printf(" No Errors\n");
    }
    return 0;
}
