/*
 * Round trip between two threads of one rank through MPI_COMM_SELF (MPI_THREAD_MULTIPLE):
 * each message must wake the other thread, which sleeps at once with OXMPI_SPIN=0
 * OXMPI_YIELD=0. With OXMPI_NETMOD=tcp (no node segment) one of them sleeps in the TCP
 * epoll set, where only the set's eventfd reaches it.
 *
 *   mpicc -O2 -o thread_pingpong bench/probe/thread_pingpong.c -lpthread
 *   OXMPI_SPIN=0 OXMPI_YIELD=0 OXMPI_NETMOD=tcp mpiexec -n 2 ./thread_pingpong
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#define N 400
static void *peer(void *arg) {
    int v;
    for (int i = 0; i < N; i++) {
        MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_SELF);
    }
    return arg;
}
int main(int argc, char **argv) {
    int p, r;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    pthread_t t;
    pthread_create(&t, 0, peer, 0);
    double t0 = MPI_Wtime();
    for (int i = 0; i < N; i++) {
        MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_SELF);
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    }
    double dt = MPI_Wtime() - t0;
    pthread_join(t, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) printf("round trip between two threads: %.1f us\n", dt / N * 1e6);
    MPI_Finalize();
}
