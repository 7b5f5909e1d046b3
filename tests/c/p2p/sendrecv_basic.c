/*
 * Blocking MPI_Send / MPI_Recv: status fields, MPI_Get_count, receiving into a larger buffer
 * (bytes past the message untouched), MPI_ANY_SOURCE / MPI_ANY_TAG, a ring at any size.
 */
#include "mtest.h"

static void pingpong(int peer, int count, int tag)
{
    int rank = mtest_rank();
    int *buf = mtest_malloc((size_t)(count + 16) * sizeof(int));
    MPI_Status st;
    if (rank == 0) {
        for (int i = 0; i < count; i++) {
            buf[i] = peer * 1000003 + i;
        }
        MTEST_CALL(MPI_Send(buf, count, MPI_INT, peer, tag, MPI_COMM_WORLD));
        memset(buf, 0xAB, (size_t)(count + 16) * sizeof(int));
        /* Receive the reply into a buffer 16 ints larger than the message. */
        MTEST_CALL(MPI_Recv(buf, count + 16, MPI_INT, peer, tag + 1, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, peer, tag + 1, MPI_INT, count);
        int bytes = -1;
        MTEST_CALL(MPI_Get_count(&st, MPI_BYTE, &bytes));
        MTEST_EQ("MPI_Get_count(MPI_BYTE) of reply", (long long)count * (long long)sizeof(int), bytes);
        for (int i = 0; i < count; i++) {
            if (buf[i] != -(peer * 1000003 + i)) {
                MTEST_EQ("reply element", -(peer * 1000003 + i), buf[i]);
                break;
            }
        }
        mtest_verify_const(buf + count, 16 * sizeof(int), 0xAB, "receive buffer past the message");
    } else {
        memset(buf, 0, (size_t)(count + 16) * sizeof(int));
        MTEST_CALL(MPI_Recv(buf, count, MPI_INT, 0, tag, MPI_COMM_WORLD, &st));
        MTEST_STATUS(&st, 0, tag, MPI_INT, count);
        for (int i = 0; i < count; i++) {
            if (buf[i] != rank * 1000003 + i) {
                MTEST_EQ("message element", rank * 1000003 + i, buf[i]);
                break;
            }
            buf[i] = -buf[i];
        }
        MTEST_CALL(MPI_Send(buf, count, MPI_INT, 0, tag + 1, MPI_COMM_WORLD));
    }
    free(buf);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank(), size = mtest_size();
    const int counts[] = {0, 1, 2, 100, 4096, 65536};
    MPI_Status st;

    /* 1. ping-pong between rank 0 and every other rank, several sizes */
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int peer = 1; peer < size; peer++) {
            if (rank == 0 || rank == peer) {
                pingpong(peer, counts[c], (int)(10 + 2 * c));
            }
        }
    }

    /* 2. ring: even ranks send first, odd ranks receive first (safe without buffering) */
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out[3] = {rank, rank * 7, -rank}, in[3] = {-1, -1, -1};
        if (rank % 2 == 0) {
            MTEST_CALL(MPI_Send(out, 3, MPI_INT, right, 5, MPI_COMM_WORLD));
            MTEST_CALL(MPI_Recv(in, 3, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
        } else {
            MTEST_CALL(MPI_Recv(in, 3, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
            MTEST_CALL(MPI_Send(out, 3, MPI_INT, right, 5, MPI_COMM_WORLD));
        }
        MTEST_STATUS(&st, left, 5, MPI_INT, 3);
        MTEST_EQ("ring in[0]", left, in[0]);
        MTEST_EQ("ring in[1]", left * 7, in[1]);
        MTEST_EQ("ring in[2]", -left, in[2]);
    }

    /* 3. a message of chars received as MPI_CHAR with a larger count; MPI_Get_count in bytes */
    if (size > 1 && rank < 2) {
        char text[64];
        if (rank == 1) {
            snprintf(text, sizeof text, "hello from rank %d", rank);
            MTEST_CALL(MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD));
        } else {
            memset(text, 'x', sizeof text);
            MTEST_CALL(MPI_Recv(text, (int)sizeof text, MPI_CHAR, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MTEST_STATUS(&st, 1, 7, MPI_CHAR, (int)strlen("hello from rank 1") + 1);
            MTEST_CHECK(strcmp(text, "hello from rank 1") == 0, "text received: '%.20s'", text);
        }
    }

    /* 4. rank 0 receives one message from every other rank with MPI_ANY_SOURCE / MPI_ANY_TAG;
     * the status must identify the sender, the contents must agree with it.  Rank 1 sent its
     * text message (section 3) first, so by non-overtaking it cannot match here. */
    if (rank == 0) {
        int seen[256] = {0};
        for (int i = 1; i < size; i++) {
            double d[2] = {0, 0};
            MTEST_CALL(MPI_Recv(d, 2, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            MTEST_CHECK(src > 0 && src < size, "ANY_SOURCE status.MPI_SOURCE %d out of range", src);
            if (src > 0 && src < size && src < 256) {
                MTEST_EQ("tag from this source", 100 + src, st.MPI_TAG);
                MTEST_CHECK(d[0] == src + 0.5 && d[1] == -src * 2.0, "payload from %d: %g %g", src,
                            d[0], d[1]);
                MTEST_EQ("messages seen from this source", 0, seen[src]);
                seen[src]++;
            }
            int n = -1;
            MTEST_CALL(MPI_Get_count(&st, MPI_DOUBLE, &n));
            MTEST_EQ("MPI_Get_count(MPI_DOUBLE)", 2, n);
        }
    } else {
        double d[2] = {rank + 0.5, -rank * 2.0};
        MTEST_CALL(MPI_Send(d, 2, MPI_DOUBLE, 0, 100 + rank, MPI_COMM_WORLD));
    }

    return mtest_finalize();
}
