/*
 * Quick point-to-point measurement between ranks 0 and 1 (used by tests/net/compare-tcp):
 *   latency: ping-pong with MPI_Send/MPI_Recv, half the round trip in microseconds;
 *   bandwidth: rank 0 sends a window of 16 MPI_Isend, rank 1 posts 16 MPI_Irecv, then a
 *   4-byte acknowledgement; MB/s (10^6 bytes).
 * The first exchange of every size is checked byte by byte (outside the timing).
 * Usage: pingpong [lat|bw] SIZE...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 31u + seed);
}

static int check(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 31u + seed))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: pingpong lat|bw SIZE... (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bw = strcmp(argv[1], "bw") == 0;
    for (int a = 2; a < argc; a++) {
        size_t n = (size_t)atol(argv[a]);
        unsigned char *buf = malloc(n ? n * WINDOW : 1);
        memset(buf, 0, n ? n * WINDOW : 1);
        /* validation exchange */
        if (rank == 0) {
            fill(buf, n, (unsigned)a);
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!check(buf, n, (unsigned)a)) {
                fprintf(stderr, "VALIDATION FAILED at %zu bytes\n", n);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        int iters = n <= 65536 ? 2000 : n <= (1 << 20) ? 200 : 40;
        if (bw)
            iters = n <= 65536 ? 200 : n <= (1 << 20) ? 40 : 10;
        int warm = iters / 10 + 1;
        double t0 = 0;
        for (int i = 0; i < iters + warm; i++) {
            if (i == warm) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (!bw) {
                if (rank == 0) {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
                }
            } else {
                MPI_Request r[WINDOW];
                MPI_Status sts[WINDOW];
                int ack = 0;
                if (rank == 0) {
                    for (int w = 0; w < WINDOW; w++)
                        MPI_Isend(buf + w * n, (int)n, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &r[w]);
                    MPI_Waitall(WINDOW, r, sts);
                    MPI_Recv(&ack, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    for (int w = 0; w < WINDOW; w++)
                        MPI_Irecv(buf + w * n, (int)n, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r[w]);
                    MPI_Waitall(WINDOW, r, sts);
                    MPI_Send(&ack, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
                }
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            if (bw)
                printf("bw %zu %.1f MB/s\n", n, (double)n * WINDOW * iters / t / 1e6);
            else
                printf("lat %zu %.2f us\n", n, t / iters / 2 * 1e6);
            fflush(stdout);
        }
        free(buf);
    }
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
