/*
 * Messages whose length differs from the receive's on a communicator asserting
 * mpi_assert_exact_length (with mpi_assert_no_any_source and no_any_tag).
 *
 * MPI 4.1 section 7.4.4 lets the implementation assume that every message received on
 * such a communicator is exactly as long as its receive buffer, so a program that sends
 * a shorter or a longer one is erroneous and the standard leaves the outcome open.
 * oxmpi promises what it does without the assertion: a shorter message lands whole,
 * leaves the rest of the buffer untouched and is counted as sent; a longer one writes no
 * byte past the buffer and reports MPI_ERR_TRUNCATE (with the status's source and tag). (MPICH and Open MPI ignore the
 * assertion and behave the same, but the standard does not require it: hence _strict.)
 *
 * Each even rank r sends to rank r + 1 (an odd last rank only takes part in the
 * barriers). Every case runs four ways: the message waits in the transport before
 * MPI_Irecv or MPI_Recv is called, or the receive is posted (MPI_Irecv) or waiting
 * (MPI_Recv in a loop with the send after a barrier) before the message arrives.
 */
#include "mtest.h"

#define CAP 8
#define SHORT 5
#define LONG 12
#define FILL -7

static MPI_Comm asserted(void)
{
    MPI_Info info;
    MPI_Comm c;
    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MTEST_CALL(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    MTEST_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    MTEST_CALL(MPI_Info_free(&info));
    return c;
}

static int value(int round, int k)
{
    return round * 1000 + k;
}

/* Checks the receive of round `round`: `sent` ints were sent into a buffer of CAP
 * (plus guard words after it), received with error code `rc` and status `st`. */
static void check(int round, int sent, int rc, const MPI_Status *st, const int *buf, int src)
{
    int got = sent < CAP ? sent : CAP, count = -1;
    if (sent > CAP) {
        MTEST_EQ("error class of a longer message", MPI_ERR_TRUNCATE, mtest_errclass(rc));
    } else {
        MTEST_EQ("error code of a shorter message", MPI_SUCCESS, rc);
        MTEST_CALL(MPI_Get_count(st, MPI_INT, &count));
        MTEST_EQ("count of a shorter message", sent, count);
    }
    MTEST_EQ("status source", src, st->MPI_SOURCE);
    MTEST_EQ("status tag", round, st->MPI_TAG);
    /* A truncated receive's buffer holds undefined data (MPICH writes none of it). */
    for (int k = 0; sent <= CAP && k < got; k++) {
        MTEST_CHECK(buf[k] == value(round, k), "round %d: element %d is %d, expected %d", round, k,
                    buf[k], value(round, k));
    }
    for (int k = got; k < CAP + LONG; k++) {
        MTEST_CHECK(buf[k] == FILL, "round %d: element %d past the message was written (%d)", round,
                    k, buf[k]);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    /* (mtest_init also makes MPI_COMM_WORLD return errors: MPICH reports an error of
     * MPI_Wait to its handler.) */
    mtest_init(&argc, &argv);
    MTEST_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MTEST_CALL(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm c = asserted();
    MTEST_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
    int active = partner < size;
    int sbuf[LONG], rbuf[CAP + LONG];
    int round = 0;
    for (int way = 0; way < 4; way++) {
        for (int len = 0; len < 3; len++, round++) {
            int sent = len == 0 ? SHORT : len == 1 ? LONG : CAP;
            int early = way >= 2; /* the receive comes before the message */
            int blocking = way % 2 == 1;
            MPI_Request req = MPI_REQUEST_NULL;
            MPI_Status st;
            int rc = MPI_SUCCESS;
            for (int k = 0; k < CAP + LONG; k++) {
                rbuf[k] = FILL;
            }
            for (int k = 0; k < LONG; k++) {
                sbuf[k] = value(round, k);
            }
            if (active && rank % 2 == 1 && early && !blocking) {
                MTEST_CALL(MPI_Irecv(rbuf, CAP, MPI_INT, partner, round, c, &req));
            }
            if (active && rank % 2 == 0 && !early) {
                MTEST_CALL(MPI_Send(sbuf, sent, MPI_INT, partner, round, c));
            }
            MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
            if (active && rank % 2 == 0 && early) {
                if (blocking) {
                    /* Let the receiver reach its MPI_Recv first. */
                    mtest_sleep_ms(20);
                }
                MTEST_CALL(MPI_Send(sbuf, sent, MPI_INT, partner, round, c));
            }
            if (active && rank % 2 == 1) {
                if (blocking) {
                    rc = MPI_Recv(rbuf, CAP, MPI_INT, partner, round, c, &st);
                } else {
                    if (!early) {
                        MTEST_CALL(MPI_Irecv(rbuf, CAP, MPI_INT, partner, round, c, &req));
                    }
                    rc = MPI_Wait(&req, &st);
                }
                check(round, sent, rc, &st, rbuf, partner);
            }
        }
    }
    MTEST_CALL(MPI_Comm_free(&c));
    return mtest_finalize();
}
