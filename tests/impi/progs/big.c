/* Long messages across IMPI clients: 1 to 8 MiB each way between rank 0 (client 0) and
 * the last rank (another client), as bytes (external32 is the native form) and as ints
 * (converted on both sides), one way at a time and both ways at once, a window of
 * several in flight, and a synchronous send; every byte is checked.
 * Prints " No Errors" from rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;

static unsigned char pat(long i, int salt) { return (unsigned char)(i * 131 + i / 4093 + salt); }

static void fill(unsigned char *b, long n, int salt)
{
    for (long i = 0; i < n; i++)
        b[i] = pat(i, salt);
}

static void check(const unsigned char *b, long n, int salt, const char *what)
{
    for (long i = 0; i < n; i++)
        if (b[i] != pat(i, salt)) {
            if (errs++ < 5)
                printf("%s: byte %ld of %ld is %d, not %d\n", what, i, n, b[i], pat(i, salt));
            return;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank == 0 ? size - 1 : 0;
    long max = 8L << 20;
    unsigned char *s = malloc(4 * max), *r = malloc(4 * max);
    if (rank == 0 || rank == size - 1) {
        for (long n = 1L << 20; n <= max; n *= 2) {
            long m = n + 3 * (n >> 20); /* not a multiple of any packet size */
            /* One way, then the other, in bytes. */
            for (int dir = 0; dir < 2; dir++) {
                int me_sends = (dir == 0) == (rank == 0);
                if (me_sends) {
                    fill(s, m, (int)n + dir);
                    MPI_Send(s, (int)m, MPI_BYTE, peer, dir, MPI_COMM_WORLD);
                } else {
                    MPI_Status st;
                    int cnt;
                    memset(r, 0, m);
                    MPI_Recv(r, (int)m, MPI_BYTE, peer, dir, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_BYTE, &cnt);
                    if (cnt != m && errs++ < 5)
                        printf("count %d, not %ld\n", cnt, m);
                    check(r, m, (int)n + dir, "one way, bytes");
                }
            }
            /* Both ways at once, as ints (converted to external32 and back). */
            MPI_Request q[2];
            long k = m / 4;
            int *si = (int *)s, *ri = (int *)r;
            for (long i = 0; i < k; i++)
                si[i] = (int)(i * 2654435761u) ^ rank;
            memset(r, 0, 4 * k);
            MPI_Irecv(ri, (int)k, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(si, (int)k, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            for (long i = 0; i < k; i++)
                if (ri[i] != ((int)(i * 2654435761u) ^ peer)) {
                    if (errs++ < 5)
                        printf("both ways, ints of %ld: element %ld is %d\n", n, i, ri[i]);
                    break;
                }
        }
        /* A window of four 1 MiB byte messages each way at once, and an Ssend of 2 MiB. */
        long w = 1L << 20;
        MPI_Request q[8];
        for (int i = 0; i < 4; i++) {
            fill(s + i * w, w, 40 + i + rank);
            MPI_Irecv(r + i * w, (int)w, MPI_BYTE, peer, 20 + i, MPI_COMM_WORLD, &q[i]);
        }
        for (int i = 0; i < 4; i++)
            MPI_Isend(s + i * w, (int)w, MPI_BYTE, peer, 20 + i, MPI_COMM_WORLD, &q[4 + i]);
        MPI_Waitall(8, q, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++)
            check(r + i * w, w, 40 + i + peer, "window");
        if (rank == 0) {
            fill(s, 2 * w, 99);
            MPI_Ssend(s, (int)(2 * w), MPI_BYTE, peer, 30, MPI_COMM_WORLD);
        } else {
            MPI_Recv(r, (int)(2 * w), MPI_BYTE, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(r, 2 * w, 99, "ssend");
        }
    }
    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? " Found %d errors\n" : " No Errors\n", all);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
