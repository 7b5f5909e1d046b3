/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): a ring exchange at several sizes
 * (none, eager and rendezvous), contiguous and strided datatypes; the request completes
 * with the receive's status (source, tag, count); several pairs outstanding at once,
 * finished by MPI_Waitall, MPI_Test and MPI_Waitany; MPI_Request_get_status reads the
 * status without freeing the request; MPI_PROC_NULL on both sides; invalid arguments
 * give the right class and the program goes on communicating.
 *
 * Strict: MPICH 4.0.2 completes the request with a status whose tag and count are 0
 * (and source 0), corrupts the reference count of a derived datatype given to
 * MPI_Isendrecv_replace (an assertion in MPI_Type_free), and crashes on an invalid
 * destination rank; Open MPI 4.1 has no MPI_Isendrecv.
 */
#include "mtest.h"

static int value(int from, int i, int salt)
{
    return from * 1000003 + i * 7 + salt;
}

/* One ring exchange of `count` ints with MPI_Isendrecv, finished by MPI_Wait. */
static void ring_contig(int count, int tag)
{
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = mtest_malloc((size_t)(count + 1) * sizeof(int));
    int *in = mtest_malloc((size_t)(count + 4) * sizeof(int));
    for (int i = 0; i < count; i++) {
        out[i] = value(rank, i, tag);
    }
    memset(in, 0xAB, (size_t)(count + 4) * sizeof(int));
    MPI_Request r;
    MPI_Status st;
    MTEST_CALL(MPI_Isendrecv(out, count, MPI_INT, right, tag, in, count + 4, MPI_INT, left, tag,
                             MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_EQ("request after MPI_Wait", MPI_REQUEST_NULL, r);
    MTEST_STATUS(&st, left, tag, MPI_INT, count);
    for (int i = 0; i < count; i++) {
        if (in[i] != value(left, i, tag)) {
            MTEST_EQ("received element", value(left, i, tag), in[i]);
            break;
        }
    }
    mtest_verify_const(in + count, 4 * sizeof(int), 0xAB, "receive buffer past the message");
    free(out);
    free(in);
}

/* One ring exchange of `count` ints with MPI_Isendrecv_replace, finished by polling
 * MPI_Test. */
static void ring_replace(int count, int tag)
{
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *buf = mtest_malloc((size_t)(count + 1) * sizeof(int));
    for (int i = 0; i < count + 1; i++) {
        buf[i] = value(rank, i, tag);
    }
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MTEST_CALL(MPI_Isendrecv_replace(buf, count, MPI_INT, right, tag, left, tag, MPI_COMM_WORLD,
                                     &r));
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, &st));
    }
    MTEST_EQ("request after MPI_Test", MPI_REQUEST_NULL, r);
    MTEST_STATUS(&st, left, tag, MPI_INT, count);
    for (int i = 0; i < count; i++) {
        if (buf[i] != value(left, i, tag)) {
            MTEST_EQ("element after Isendrecv_replace", value(left, i, tag), buf[i]);
            break;
        }
    }
    MTEST_EQ("element past the message", value(rank, count, tag), buf[count]);
    free(buf);
}

/* One ring exchange with MPI_Isendrecv_replace on every other int of a buffer (a vector
 * type), finished by polling MPI_Test. */
static void ring_replace_strided(int count, int tag)
{
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype vec;
    MTEST_CALL(MPI_Type_vector(count, 1, 2, MPI_INT, &vec));
    MTEST_CALL(MPI_Type_commit(&vec));
    int *buf = mtest_malloc((size_t)(2 * count + 1) * sizeof(int));
    for (int i = 0; i < 2 * count + 1; i++) {
        buf[i] = (i % 2 == 0) ? value(rank, i / 2, tag) : -i;
    }
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MTEST_CALL(MPI_Isendrecv_replace(buf, count > 0 ? 1 : 0, vec, right, tag, left, tag,
                                     MPI_COMM_WORLD, &r));
    while (!flag) {
        MTEST_CALL(MPI_Test(&r, &flag, &st));
    }
    MTEST_EQ("request after MPI_Test", MPI_REQUEST_NULL, r);
    MTEST_STATUS(&st, left, tag, MPI_INT, count);
    for (int i = 0; i < 2 * count; i++) {
        int want = (i % 2 == 0) ? value(left, i / 2, tag) : -i;
        if (buf[i] != want) {
            MTEST_EQ("element after Isendrecv_replace", want, buf[i]);
            break;
        }
    }
    free(buf);
    MTEST_CALL(MPI_Type_free(&vec));
}

/* Several exchanges outstanding at once with both neighbours; MPI_Waitall. */
static void many_outstanding(void)
{
    enum { N = 6, COUNT = 33 };
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[N][COUNT], in[N][COUNT];
    MPI_Request r[N];
    MPI_Status st[N];
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < COUNT; i++) {
            out[k][i] = value(rank, i, 100 + k);
            in[k][i] = -1;
        }
        /* even k: to the right, odd k: to the left, in both cases from the other side */
        int dest = (k % 2 == 0) ? right : left, src = (k % 2 == 0) ? left : right;
        MTEST_CALL(MPI_Isendrecv(out[k], COUNT, MPI_INT, dest, 100 + k, in[k], COUNT, MPI_INT,
                                 src, 100 + k, MPI_COMM_WORLD, &r[k]));
    }
    MTEST_CALL(MPI_Waitall(N, r, st));
    for (int k = 0; k < N; k++) {
        int src = (k % 2 == 0) ? left : right;
        MTEST_EQ("request after MPI_Waitall", MPI_REQUEST_NULL, r[k]);
        MTEST_STATUS(&st[k], src, 100 + k, MPI_INT, COUNT);
        for (int i = 0; i < COUNT; i++) {
            if (in[k][i] != value(src, i, 100 + k)) {
                MTEST_EQ("element of an outstanding exchange", value(src, i, 100 + k), in[k][i]);
                break;
            }
        }
    }
}

/* MPI_Request_get_status leaves the request alone: MPI_Waitany then finishes it with the
 * same status. The receive is posted by MPI_ANY_TAG, so the status carries the tag. */
static void get_status_keeps_request(void)
{
    int rank = mtest_rank(), size = mtest_size();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, rank + 1, rank + 2}, in[3] = {-1, -1, -1};
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, st2;
    int flag = 0, index = -1;
    MTEST_CALL(MPI_Isendrecv(out, 3, MPI_INT, right, 77, in, 3, MPI_INT, left, MPI_ANY_TAG,
                             MPI_COMM_WORLD, &r[1]));
    while (!flag) {
        MTEST_CALL(MPI_Request_get_status(r[1], &flag, &st));
    }
    MTEST_CHECK(r[1] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    MTEST_STATUS(&st, left, 77, MPI_INT, 3);
    MTEST_CALL(MPI_Request_get_status(r[1], &flag, MPI_STATUS_IGNORE));
    MTEST_EQ("flag of a second MPI_Request_get_status", 1, flag);
    MTEST_CALL(MPI_Waitany(2, r, &index, &st2));
    MTEST_EQ("MPI_Waitany index", 1, index);
    MTEST_EQ("request after MPI_Waitany", MPI_REQUEST_NULL, r[1]);
    MTEST_STATUS(&st2, left, 77, MPI_INT, 3);
    MTEST_EQ("first received element", left, in[0]);
    MTEST_EQ("last received element", left + 2, in[2]);
}

static void proc_null(void)
{
    int out = 5, in = -1;
    MPI_Request r;
    MPI_Status st;
    MTEST_CALL(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 3, &in, 1, MPI_INT, MPI_PROC_NULL, 3,
                             MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_PROC_NULL_STATUS(&st);
    MTEST_EQ("receive buffer after MPI_PROC_NULL", -1, in);
    MTEST_CALL(MPI_Isendrecv_replace(&in, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3,
                                     MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Wait(&r, &st));
    MTEST_PROC_NULL_STATUS(&st);
}

static void bad_arguments(void)
{
    int size = mtest_size();
    int x = 0, y = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, 0, 0,
                                                   MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, size, 0,
                                                   MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Isendrecv(&x, 1, MPI_INT, 0, -1, &y, 1, MPI_INT, 0, 0,
                                                  MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Isendrecv(&x, -1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0,
                                                    MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_TYPE, MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1,
                                                   MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_COMM, MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0,
                                                   MPI_COMM_NULL, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_RANK, MPI_Isendrecv_replace(&x, 1, MPI_INT, size, 0, 0, 0,
                                                           MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_TAG, MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, 0, -5,
                                                          MPI_COMM_WORLD, &r));
    MTEST_EXPECT_CLASS(MPI_ERR_COUNT, MPI_Isendrecv_replace(&x, -2, MPI_INT, 0, 0, 0, 0,
                                                            MPI_COMM_WORLD, &r));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int counts[] = {0, 1, 17, 4096, 100000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        ring_contig(counts[c], (int)(10 + c));
        ring_replace(counts[c], (int)(20 + c));
        ring_replace_strided(counts[c], (int)(30 + c));
    }
    many_outstanding();
    mtest_barrier();
    get_status_keeps_request();
    proc_null();
    bad_arguments();
    /* still communicating after the errors */
    ring_contig(8, 50);
    return mtest_finalize();
}
