/*
 * Argument checking, table-driven: every function of the C library is called with each
 * kind of invalid argument it can be given, under MPI_ERRORS_RETURN, and the error class
 * is checked.  Rows are grouped by the kind of argument that is wrong:
 *
 *   communicator   MPI_COMM_NULL, a freed communicator, a handle of another kind,
 *                  an intercommunicator where an intracommunicator is required
 *   datatype       MPI_DATATYPE_NULL, a freed type, another kind, an uncommitted type
 *   count          -1
 *   rank/root/tag  out of range
 *   request, op, group, info, errhandler, keyval: null, freed or foreign handles
 *   pointers       NULL where the call must store a result
 *   topology       a topology call on a communicator without (or with another) topology
 *   MPI_IN_PLACE   given where the call does not accept it (point-to-point, receive buffers)
 *
 * Each row names the call and the error classes accepted (the class MPICH returns and,
 * where the standard leaves room, the other defensible one).  Collective rows use only
 * errors that every member detects before communicating (or run on MPI_COMM_SELF), so
 * the program stays correct.  After the table the program must still communicate:
 * point-to-point, MPI_Barrier and MPI_Allreduce on MPI_COMM_WORLD.
 *
 * Runs at any size; the intercommunicator rows need at least 2 ranks.
 */
#include "mtest.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* MPI-4.1's class for an invalid error handler. MPICH 4.0.2's header lacks it; compiled
 * against that header (tests/c/run --abi) the program runs on oxmpi, whose value it is. */
#ifndef MPI_ERR_ERRHANDLER
#define MPI_ERR_ERRHANDLER 79
#endif

static int rows;

/* One row: `rc` is the call's return code; it must be an error of class c1 or c2
 * (c2 == MPI_SUCCESS: only c1). */
static void row_at(int line, const char *call, int c1, int c2, int rc)
{
    rows++;
    if (rc == MPI_SUCCESS) {
        mtest_fail_at(__FILE__, line, "%s: returned MPI_SUCCESS, expected an error", call);
        return;
    }
    int cls = mtest_errclass(rc);
    if (cls != c1 && (c2 == MPI_SUCCESS || cls != c2)) {
        mtest_fail_at(__FILE__, line, "%s: error class %d (%s), expected %d or %d", call, cls,
                      mtest_errstr(rc), c1, c2);
        return;
    }
    /* The message must name something specific: the class name is not enough. */
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS || len <= 0) {
        mtest_fail_at(__FILE__, line, "%s: MPI_Error_string failed for code %d", call, rc);
    }
}

#define ROW(c1, call) row_at(__LINE__, #call, (c1), MPI_SUCCESS, (call))
#define ROW2(c1, c2, call) row_at(__LINE__, #call, (c1), (c2), (call))

/* ---- callbacks needed to create objects ------------------------------------------------ */

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void sum_fn_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void eh_fn(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
}

static int gq_query(void *s, MPI_Status *st)
{
    (void)s;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int gq_free(void *s)
{
    (void)s;
    return MPI_SUCCESS;
}

static int gq_cancel(void *s, int complete)
{
    (void)s, (void)complete;
    return MPI_SUCCESS;
}

/* ---- the objects the rows use ---------------------------------------------------------- */

static int rank, size;
static MPI_Comm freed_comm, foreign_comm, half = MPI_COMM_NULL, inter = MPI_COMM_NULL, cart;
static MPI_Datatype freed_type, foreign_type, uncommitted;
static MPI_Group world_group, freed_group, foreign_group;
static MPI_Op freed_op, foreign_op;
static MPI_Info info, freed_info, foreign_info;
static MPI_Errhandler freed_eh, foreign_eh;
static int comm_keyval, type_keyval, freed_keyval;
static MPI_Request foreign_req, bogus_req;
static int ibuf[64], ibuf2[64];
static MPI_Status st;

static void setup(void)
{
    rank = mtest_rank();
    size = mtest_size();
    foreign_comm = (MPI_Comm)MPI_INT;

    /* Handles are table slots that a later creation reuses: each freed object is the
     * last of its kind created before the rows run. */
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    MPI_Datatype t;
    MTEST_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    MTEST_CALL(MPI_Type_commit(&t));
    freed_type = t;
    MTEST_CALL(MPI_Type_free(&t));
    foreign_type = (MPI_Datatype)MPI_COMM_WORLD;

    MTEST_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPI_Group g;
    MTEST_CALL(MPI_Group_incl(world_group, 1, &rank, &g));
    freed_group = g;
    MTEST_CALL(MPI_Group_free(&g));
    foreign_group = (MPI_Group)MPI_COMM_WORLD;

    MPI_Op o;
    MTEST_CALL(MPI_Op_create(sum_fn, 1, &o));
    freed_op = o;
    MTEST_CALL(MPI_Op_free(&o));
    foreign_op = (MPI_Op)MPI_INT;

    MTEST_CALL(MPI_Info_create(&info));
    MTEST_CALL(MPI_Info_set(info, "key", "value"));
    MPI_Info i;
    MTEST_CALL(MPI_Info_create(&i));
    freed_info = i;
    MTEST_CALL(MPI_Info_free(&i));
    foreign_info = (MPI_Info)MPI_COMM_WORLD;

    MPI_Errhandler e;
    MTEST_CALL(MPI_Comm_create_errhandler(eh_fn, &e));
    freed_eh = e;
    MTEST_CALL(MPI_Errhandler_free(&e));
    foreign_eh = (MPI_Errhandler)MPI_COMM_WORLD;

    MTEST_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                                      &comm_keyval, NULL));
    MTEST_CALL(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN,
                                      &type_keyval, NULL));
    int k;
    MTEST_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
    freed_keyval = k;
    MTEST_CALL(MPI_Comm_free_keyval(&k));

    foreign_req = (MPI_Request)MPI_COMM_WORLD;
    /* a request-kind handle that names no request (index far beyond any in use) */
    MPI_Request r;
    MTEST_CALL(MPI_Irecv(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    bogus_req = (MPI_Request)((unsigned)r | 0x00fffff0u);
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));

    if (size >= 2) {
        /* even ranks and odd ranks, leaders world ranks 0 and 1 */
        MTEST_CALL(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MTEST_CALL(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
        MTEST_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
    }
    int dims[1] = {size}, periods[1] = {0};
    MTEST_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    MPI_Comm c;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    freed_comm = c;
    MTEST_CALL(MPI_Comm_free(&c));
    memset(&st, 0, sizeof st);
}

static void teardown(void)
{
    MTEST_CALL(MPI_Type_free(&uncommitted));
    MTEST_CALL(MPI_Group_free(&world_group));
    MTEST_CALL(MPI_Info_free(&info));
    MTEST_CALL(MPI_Comm_free_keyval(&comm_keyval));
    MTEST_CALL(MPI_Type_free_keyval(&type_keyval));
    if (inter != MPI_COMM_NULL) {
        MTEST_CALL(MPI_Comm_free(&inter));
        MTEST_CALL(MPI_Comm_free(&half));
    }
    MTEST_CALL(MPI_Comm_free(&cart));
}

/* ---- communicators ---------------------------------------------------------------------- */

static void bad_communicators(void)
{
    int v, flag;
    MPI_Comm out;
    MPI_Group g;
    MPI_Request r;
    MPI_Comm bad[3];
    bad[0] = MPI_COMM_NULL;
    bad[1] = freed_comm;
    bad[2] = foreign_comm;
    for (int i = 0; i < 3; i++) {
        MPI_Comm c = bad[i];
        ROW(MPI_ERR_COMM, MPI_Comm_size(c, &v));
        ROW(MPI_ERR_COMM, MPI_Comm_rank(c, &v));
        ROW(MPI_ERR_COMM, MPI_Send(ibuf, 1, MPI_INT, 0, 0, c));
        ROW(MPI_ERR_COMM, MPI_Bsend(ibuf, 1, MPI_INT, 0, 0, c));
        ROW(MPI_ERR_COMM, MPI_Ssend(ibuf, 1, MPI_INT, 0, 0, c));
        ROW(MPI_ERR_COMM, MPI_Rsend(ibuf, 1, MPI_INT, 0, 0, c));
        ROW(MPI_ERR_COMM, MPI_Isend(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Ibsend(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Issend(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Irsend(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Send_init(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Bsend_init(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Ssend_init(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Rsend_init(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Recv(ibuf, 1, MPI_INT, 0, 0, c, &st));
        ROW(MPI_ERR_COMM, MPI_Irecv(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Recv_init(ibuf, 1, MPI_INT, 0, 0, c, &r));
        ROW(MPI_ERR_COMM, MPI_Sendrecv(ibuf, 1, MPI_INT, 0, 0, ibuf2, 1, MPI_INT, 0, 0, c, &st));
        ROW(MPI_ERR_COMM, MPI_Sendrecv_replace(ibuf, 1, MPI_INT, 0, 0, 0, 0, c, &st));
        ROW(MPI_ERR_COMM, MPI_Probe(0, 0, c, &st));
        ROW(MPI_ERR_COMM, MPI_Iprobe(0, 0, c, &flag, &st));
        ROW(MPI_ERR_COMM, MPI_Pack_size(1, MPI_INT, c, &v));
        {
            char pk[16];
            int pos = 0;
            MPI_Count cpos = 0, csz;
            ROW(MPI_ERR_COMM, MPI_Pack(ibuf, 1, MPI_INT, pk, sizeof pk, &pos, c));
            ROW(MPI_ERR_COMM, MPI_Unpack(pk, sizeof pk, &pos, ibuf, 1, MPI_INT, c));
            ROW(MPI_ERR_COMM, MPI_Pack_c(ibuf, 1, MPI_INT, pk, sizeof pk, &cpos, c));
            ROW(MPI_ERR_COMM, MPI_Unpack_c(pk, sizeof pk, &cpos, ibuf, 1, MPI_INT, c));
            ROW(MPI_ERR_COMM, MPI_Pack_size_c(1, MPI_INT, c, &csz));
        }
        ROW(MPI_ERR_COMM, MPI_Barrier(c));
        ROW(MPI_ERR_COMM, MPI_Bcast(ibuf, 1, MPI_INT, 0, c));
        ROW(MPI_ERR_COMM, MPI_Gather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, 0, c));
        ROW(MPI_ERR_COMM, MPI_Gatherv(ibuf, 1, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT, 0, c));
        ROW(MPI_ERR_COMM, MPI_Scatter(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, 0, c));
        ROW(MPI_ERR_COMM, MPI_Scatterv(ibuf, ibuf, ibuf, MPI_INT, ibuf2, 1, MPI_INT, 0, c));
        ROW(MPI_ERR_COMM, MPI_Allgather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, c));
        ROW(MPI_ERR_COMM, MPI_Allgatherv(ibuf, 1, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT, c));
        ROW(MPI_ERR_COMM, MPI_Alltoall(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, c));
        ROW(MPI_ERR_COMM, MPI_Alltoallv(ibuf, ibuf, ibuf, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT, c));
        {
            MPI_Datatype ts[1] = {MPI_INT};
            ROW(MPI_ERR_COMM, MPI_Alltoallw(ibuf, ibuf, ibuf, ts, ibuf2, ibuf, ibuf, ts, c));
        }
        ROW(MPI_ERR_COMM, MPI_Reduce(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, 0, c));
        ROW(MPI_ERR_COMM, MPI_Allreduce(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, c));
        ROW(MPI_ERR_COMM, MPI_Reduce_scatter(ibuf, ibuf2, ibuf, MPI_INT, MPI_SUM, c));
        ROW(MPI_ERR_COMM, MPI_Reduce_scatter_block(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, c));
        ROW(MPI_ERR_COMM, MPI_Scan(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, c));
        ROW(MPI_ERR_COMM, MPI_Exscan(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, c));
        ROW(MPI_ERR_COMM, MPI_Comm_dup(c, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_create(c, world_group, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_create_group(c, world_group, 0, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_split(c, 0, 0, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out));
        out = c;
        ROW(MPI_ERR_COMM, MPI_Comm_free(&out));
        ROW(MPI_ERR_COMM, MPI_Comm_compare(c, MPI_COMM_WORLD, &v));
        ROW(MPI_ERR_COMM, MPI_Comm_compare(MPI_COMM_WORLD, c, &v));
        ROW(MPI_ERR_COMM, MPI_Comm_test_inter(c, &v));
        ROW(MPI_ERR_COMM, MPI_Comm_remote_size(c, &v));
        ROW(MPI_ERR_COMM, MPI_Comm_remote_group(c, &g));
        ROW(MPI_ERR_COMM, MPI_Comm_group(c, &g));
        ROW(MPI_ERR_COMM, MPI_Comm_set_name(c, "x"));
        {
            char name[MPI_MAX_OBJECT_NAME];
            /* MPI_COMM_NULL has a name (tested in env/null_names_strict). */
            if (c != MPI_COMM_NULL)
                ROW(MPI_ERR_COMM, MPI_Comm_get_name(c, name, &v));
        }
        ROW(MPI_ERR_COMM, MPI_Intercomm_create(c, 0, MPI_COMM_WORLD, 0, 0, &out));
        ROW(MPI_ERR_COMM, MPI_Intercomm_merge(c, 0, &out));
        ROW(MPI_ERR_COMM, MPI_Comm_set_attr(c, comm_keyval, NULL));
        ROW(MPI_ERR_COMM, MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag));
        ROW(MPI_ERR_COMM, MPI_Comm_delete_attr(c, comm_keyval));
        ROW(MPI_ERR_COMM, MPI_Attr_put(c, comm_keyval, NULL));
        ROW(MPI_ERR_COMM, MPI_Attr_get(c, MPI_TAG_UB, &v, &flag));
        ROW(MPI_ERR_COMM, MPI_Attr_delete(c, comm_keyval));
        {
            MPI_Errhandler e;
            ROW(MPI_ERR_COMM, MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
            ROW(MPI_ERR_COMM, MPI_Comm_get_errhandler(c, &e));
            ROW(MPI_ERR_COMM, MPI_Errhandler_set(c, MPI_ERRORS_RETURN));
            ROW(MPI_ERR_COMM, MPI_Errhandler_get(c, &e));
        }
        ROW(MPI_ERR_COMM, MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
        {
            MPI_Info used;
            ROW(MPI_ERR_COMM, MPI_Comm_set_info(c, info));
            ROW(MPI_ERR_COMM, MPI_Comm_get_info(c, &used));
            MPI_Datatype ts[1] = {MPI_INT};
            MPI_Aint ad[1] = {0};
            ROW(MPI_ERR_COMM, MPI_Neighbor_allgather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, c));
            ROW(MPI_ERR_COMM, MPI_Neighbor_allgatherv(ibuf, 1, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT,
                                                      c));
            ROW(MPI_ERR_COMM, MPI_Neighbor_alltoall(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, c));
            ROW(MPI_ERR_COMM, MPI_Neighbor_alltoallv(ibuf, ibuf, ibuf, MPI_INT, ibuf2, ibuf, ibuf,
                                                     MPI_INT, c));
            ROW(MPI_ERR_COMM, MPI_Neighbor_alltoallw(ibuf, ibuf, ad, ts, ibuf2, ibuf, ad, ts, c));
        }
        ROW(MPI_ERR_COMM, MPI_Topo_test(c, &v));
        {
            int d[1] = {1}, p[1] = {0}, k[1] = {0};
            ROW(MPI_ERR_COMM, MPI_Cart_create(c, 1, d, p, 0, &out));
            ROW(MPI_ERR_COMM, MPI_Cart_map(c, 1, d, p, &v));
            ROW(MPI_ERR_COMM, MPI_Cart_coords(c, 0, 1, k));
            ROW(MPI_ERR_COMM, MPI_Cart_get(c, 1, d, p, k));
            ROW(MPI_ERR_COMM, MPI_Cart_rank(c, k, &v));
            ROW(MPI_ERR_COMM, MPI_Cart_shift(c, 0, 1, &v, &flag));
            ROW(MPI_ERR_COMM, MPI_Cart_sub(c, p, &out));
            ROW(MPI_ERR_COMM, MPI_Cartdim_get(c, &v));
            int idx[1] = {0}, e[1] = {0};
            ROW(MPI_ERR_COMM, MPI_Graph_create(c, 1, idx, e, 0, &out));
            ROW(MPI_ERR_COMM, MPI_Graph_map(c, 1, idx, e, &v));
            ROW(MPI_ERR_COMM, MPI_Graph_get(c, 1, 1, idx, e));
            ROW(MPI_ERR_COMM, MPI_Graph_neighbors(c, 0, 1, e));
            ROW(MPI_ERR_COMM, MPI_Graph_neighbors_count(c, 0, &v));
            ROW(MPI_ERR_COMM, MPI_Graphdims_get(c, &v, &flag));
            ROW(MPI_ERR_COMM, MPI_Dist_graph_create(c, 0, idx, idx, e, MPI_UNWEIGHTED,
                                                    MPI_INFO_NULL, 0, &out));
            ROW(MPI_ERR_COMM, MPI_Dist_graph_create_adjacent(c, 0, idx, MPI_UNWEIGHTED, 0, e,
                                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                                             &out));
            ROW(MPI_ERR_COMM, MPI_Dist_graph_neighbors(c, 0, idx, e, 0, idx, e));
            ROW(MPI_ERR_COMM, MPI_Dist_graph_neighbors_count(c, &v, &flag, idx));
        }
    }
}

/* An intercommunicator where an intracommunicator is required, and the reverse. */
static void wrong_comm_kind(void)
{
    int v, flag;
    MPI_Comm out;
    MPI_Group g;
    ROW(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &v));
    ROW(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
    ROW(MPI_ERR_COMM, MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out));
    if (inter == MPI_COMM_NULL) {
        return;
    }
    int d[1] = {1}, p[1] = {0}, idx[1] = {0}, e[1] = {0};
    ROW(MPI_ERR_COMM, MPI_Cart_create(inter, 1, d, p, 0, &out));
    ROW(MPI_ERR_COMM, MPI_Cart_map(inter, 1, d, p, &v));
    ROW(MPI_ERR_COMM, MPI_Graph_create(inter, 1, idx, e, 0, &out));
    ROW(MPI_ERR_COMM, MPI_Graph_map(inter, 1, idx, e, &v));
    ROW(MPI_ERR_COMM, MPI_Dist_graph_create(inter, 0, idx, idx, e, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                            0, &out));
    ROW(MPI_ERR_COMM, MPI_Dist_graph_create_adjacent(inter, 0, idx, MPI_UNWEIGHTED, 0, e,
                                                     MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out));
    ROW(MPI_ERR_COMM, MPI_Scan(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, inter));
    ROW(MPI_ERR_COMM, MPI_Exscan(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, inter));
    ROW(MPI_ERR_COMM, MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 0, &out));
    ROW(MPI_ERR_COMM, MPI_Comm_create_group(inter, world_group, 0, &out));
    /* MPI_Intercomm_create arguments that only the local leaders read: the leaders
     * detect them and every member returns the error */
    int remote = rank % 2 ? 0 : 1;
    ROW(MPI_ERR_COMM, MPI_Intercomm_create(half, 0, MPI_COMM_NULL, remote, 7, &out));
    ROW(MPI_ERR_COMM, MPI_Intercomm_create(half, 0, foreign_comm, remote, 7, &out));
    ROW(MPI_ERR_RANK, MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, size + 5, 7, &out));
    ROW(MPI_ERR_RANK, MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2, 7, &out));
    ROW(MPI_ERR_TAG, MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, -7, &out));
    /* roots of intercommunicator collectives: a rank of the remote group, MPI_ROOT or
     * MPI_PROC_NULL; anything else fails on both sides */
    ROW(MPI_ERR_ROOT, MPI_Bcast(ibuf, 1, MPI_INT, -5, inter));
    ROW(MPI_ERR_ROOT, MPI_Bcast(ibuf, 1, MPI_INT, size, inter));
    ROW(MPI_ERR_ROOT, MPI_Reduce(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, size, inter));
    /* and MPI_ROOT is no root of an intracommunicator */
    ROW(MPI_ERR_ROOT, MPI_Bcast(ibuf, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD));
    ROW(MPI_ERR_ROOT, MPI_Gather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD));
    /* topology queries on an intercommunicator (it has no topology) */
    ROW2(MPI_ERR_TOPOLOGY, MPI_ERR_COMM, MPI_Cartdim_get(inter, &v));
    ROW2(MPI_ERR_TOPOLOGY, MPI_ERR_COMM, MPI_Graphdims_get(inter, &v, &flag));
}

/* Topology calls on a communicator without that topology, and bad topology arguments. */
static void bad_topology(void)
{
    /* arrays longer than any count a row passes, so a call that reads before checking
     * stays inside them */
    int v, flag, d[64] = {1, 1}, p[64] = {0}, k[64] = {0}, idx[64] = {0}, e[64] = {0};
    MPI_Comm out;
    /* MPI_COMM_WORLD has no topology */
    ROW(MPI_ERR_TOPOLOGY, MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, k));
    ROW(MPI_ERR_TOPOLOGY, MPI_Cart_get(MPI_COMM_WORLD, 1, d, p, k));
    ROW(MPI_ERR_TOPOLOGY, MPI_Cart_rank(MPI_COMM_WORLD, k, &v));
    ROW(MPI_ERR_TOPOLOGY, MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &v, &flag));
    ROW(MPI_ERR_TOPOLOGY, MPI_Cart_sub(MPI_COMM_WORLD, p, &out));
    ROW(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &v));
    ROW(MPI_ERR_TOPOLOGY, MPI_Graph_get(MPI_COMM_WORLD, 1, 1, idx, e));
    ROW(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 1, e));
    ROW(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &v));
    ROW(MPI_ERR_TOPOLOGY, MPI_Graphdims_get(MPI_COMM_WORLD, &v, &flag));
    ROW(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 0, idx, e, 0, idx, e));
    ROW(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &v, &flag, idx));
    /* neighbourhood collectives need a topology */
    {
        MPI_Datatype ts[64];
        MPI_Aint ad[64] = {0};
        for (int i = 0; i < 64; i++) {
            ts[i] = MPI_INT;
        }
        ROW(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT,
                                                     MPI_COMM_WORLD));
        ROW(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgatherv(ibuf, 1, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT,
                                                      MPI_COMM_WORLD));
        ROW(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT,
                                                    MPI_COMM_WORLD));
        ROW(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoallv(ibuf, ibuf, ibuf, MPI_INT, ibuf2, ibuf, ibuf,
                                                     MPI_INT, MPI_COMM_WORLD));
        ROW(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoallw(ibuf, ibuf, ad, ts, ibuf2, ibuf, ad, ts,
                                                     MPI_COMM_WORLD));
        /* bad arguments on the Cartesian communicator (every member sees them) */
        ROW(MPI_ERR_COUNT, MPI_Neighbor_allgather(ibuf, -1, MPI_INT, ibuf2, 1, MPI_INT, cart));
        ROW(MPI_ERR_COUNT, MPI_Neighbor_alltoall(ibuf, 1, MPI_INT, ibuf2, -1, MPI_INT, cart));
        ROW(MPI_ERR_TYPE, MPI_Neighbor_allgather(ibuf, 1, MPI_DATATYPE_NULL, ibuf2, 1, MPI_INT,
                                                 cart));
        ROW(MPI_ERR_TYPE, MPI_Neighbor_alltoall(ibuf, 1, MPI_INT, ibuf2, 1, uncommitted, cart));
        ROW(MPI_ERR_ARG, MPI_Neighbor_allgatherv(ibuf, 1, MPI_INT, ibuf2, NULL, ibuf, MPI_INT,
                                                 cart));
        ROW(MPI_ERR_ARG, MPI_Neighbor_alltoallv(ibuf, NULL, ibuf, MPI_INT, ibuf2, ibuf, ibuf,
                                                MPI_INT, cart));
        ROW(MPI_ERR_ARG, MPI_Neighbor_alltoallw(ibuf, ibuf, ad, NULL, ibuf2, ibuf, ad, ts, cart));
        ROW2(MPI_ERR_BUFFER, MPI_ERR_ARG, MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, ibuf2, 1,
                                                                MPI_INT, cart));
        ROW2(MPI_ERR_BUFFER, MPI_ERR_ARG, MPI_Neighbor_allgather(ibuf, 1, MPI_INT, MPI_IN_PLACE, 1,
                                                                 MPI_INT, cart));
    }
    /* a Cartesian communicator is not a graph */
    ROW(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(cart, 0, &v));
    ROW(MPI_ERR_TOPOLOGY, MPI_Graph_get(cart, 1, 1, idx, e));
    ROW(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(cart, &v, &flag, idx));
    /* bad arguments on a Cartesian communicator */
    ROW(MPI_ERR_RANK, MPI_Cart_coords(cart, size, 1, k));
    ROW(MPI_ERR_RANK, MPI_Cart_coords(cart, -1, 1, k));
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_coords(cart, 0, 0, k));
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_get(cart, 0, d, p, k));
    k[0] = size; /* not periodic: out of range */
    ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Cart_rank(cart, k, &v));
    k[0] = 0;
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_shift(cart, 1, 1, &v, &flag));
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_shift(cart, -1, 1, &v, &flag));
    ROW(MPI_ERR_ARG, MPI_Cart_shift(cart, 0, 1, NULL, &flag));
    ROW(MPI_ERR_ARG, MPI_Cart_sub(cart, NULL, &out));
    ROW(MPI_ERR_ARG, MPI_Cart_sub(cart, p, NULL));
    ROW(MPI_ERR_ARG, MPI_Cartdim_get(cart, NULL));
    ROW(MPI_ERR_ARG, MPI_Topo_test(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Cart_rank(cart, NULL, &v));
    /* bad constructor arguments, detected by every member */
    d[0] = size + 1;
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &out));
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_map(MPI_COMM_WORLD, 1, d, p, &v));
    d[0] = -1;
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, &out));
    d[0] = 1;
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, -1, d, p, 0, &out));
    ROW(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, 1, NULL, p, 0, &out));
    ROW(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, 1, d, p, 0, NULL));
    ROW2(MPI_ERR_ARG, MPI_ERR_DIMS, MPI_Dims_create(size, -1, d));
    d[0] = 0;
    ROW(MPI_ERR_ARG, MPI_Dims_create(-1, 1, d));
    d[0] = size + 1;
    ROW2(MPI_ERR_DIMS, MPI_ERR_ARG, MPI_Dims_create(size, 1, d));
    d[0] = -1;
    ROW2(MPI_ERR_DIMS, MPI_ERR_ARG, MPI_Dims_create(size, 1, d));
    ROW(MPI_ERR_ARG, MPI_Dims_create(size, 1, NULL));
    idx[0] = 1;
    e[0] = 0;
    ROW(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, size + 1, idx, e, 0, &out));
    ROW(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, -1, idx, e, 0, &out));
    e[0] = size; /* edge to a node that does not exist */
    ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Graph_create(MPI_COMM_WORLD, 1, idx, e, 0, &out));
    ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Graph_map(MPI_COMM_WORLD, 1, idx, e, &v));
    e[0] = 0;
    ROW(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 1, NULL, e, 0, &out));
    ROW(MPI_ERR_ARG, MPI_Graph_map(MPI_COMM_WORLD, 1, idx, e, NULL));
    ROW2(MPI_ERR_ARG, MPI_ERR_COUNT,
         MPI_Dist_graph_create(MPI_COMM_WORLD, -1, idx, idx, e, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                               &out));
    idx[0] = size; /* a source rank out of range */
    idx[1] = 1;
    ROW2(MPI_ERR_RANK, MPI_ERR_ARG,
         MPI_Dist_graph_create(MPI_COMM_WORLD, 1, idx, idx + 1, e, MPI_UNWEIGHTED, MPI_INFO_NULL,
                               0, &out));
    ROW2(MPI_ERR_RANK, MPI_ERR_ARG,
         MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, idx, MPI_UNWEIGHTED, 0, e,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out));
    ROW2(MPI_ERR_ARG, MPI_ERR_COUNT,
         MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, idx, MPI_UNWEIGHTED, 0, e,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out));
    ROW(MPI_ERR_INFO, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, idx, MPI_UNWEIGHTED, 0, e,
                                                     MPI_UNWEIGHTED, foreign_info, 0, &out));
    ROW(MPI_ERR_INFO, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, idx, MPI_UNWEIGHTED, 0, e,
                                                     MPI_UNWEIGHTED, freed_info, 0, &out));
    ROW(MPI_ERR_INFO, MPI_Dist_graph_create(MPI_COMM_WORLD, 0, idx, idx, e, MPI_UNWEIGHTED,
                                            freed_info, 0, &out));
    ROW(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, idx, MPI_UNWEIGHTED, 0, e,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, NULL));
}

/* ---- datatypes --------------------------------------------------------------------------- */

static void bad_datatypes(void)
{
    int v, pos = 0;
    MPI_Aint a, b;
    MPI_Count cnt, cnt2;
    MPI_Datatype out;
    MPI_Request r;
    char pk[64];
    MPI_Datatype bad[4];
    bad[0] = MPI_DATATYPE_NULL;
    bad[1] = freed_type;
    bad[2] = foreign_type;
    bad[3] = uncommitted;
    for (int i = 0; i < 4; i++) {
        MPI_Datatype t = bad[i];
        /* communication with any of them, including an uncommitted type */
        ROW(MPI_ERR_TYPE, MPI_Send(ibuf, 1, t, rank, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Ssend(ibuf, 1, t, rank, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Bsend(ibuf, 1, t, rank, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Rsend(ibuf, 1, t, rank, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Isend(ibuf, 1, t, rank, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TYPE, MPI_Send_init(ibuf, 1, t, rank, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TYPE, MPI_Recv(ibuf, 1, t, rank, 0, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TYPE, MPI_Irecv(ibuf, 1, t, rank, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TYPE, MPI_Recv_init(ibuf, 1, t, rank, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TYPE, MPI_Sendrecv(ibuf, 1, t, rank, 0, ibuf2, 1, MPI_INT, rank, 0,
                                       MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TYPE, MPI_Sendrecv(ibuf, 1, MPI_INT, rank, 0, ibuf2, 1, t, rank, 0,
                                       MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TYPE, MPI_Sendrecv_replace(ibuf, 1, t, rank, 0, rank, 0, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TYPE, MPI_Bcast(ibuf, 1, t, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Allgather(ibuf, 1, t, ibuf2, 1, MPI_INT, MPI_COMM_SELF));
        ROW(MPI_ERR_TYPE, MPI_Allgather(ibuf, 1, MPI_INT, ibuf2, 1, t, MPI_COMM_SELF));
        ROW(MPI_ERR_TYPE, MPI_Alltoall(ibuf, 1, t, ibuf2, 1, MPI_INT, MPI_COMM_SELF));
        ROW(MPI_ERR_TYPE, MPI_Allreduce(ibuf, ibuf2, 1, t, MPI_SUM, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Reduce(ibuf, ibuf2, 1, t, MPI_SUM, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Reduce_local(ibuf, ibuf2, 1, t, MPI_SUM));
        ROW(MPI_ERR_TYPE, MPI_Pack(ibuf, 1, t, pk, sizeof pk, &pos, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Unpack(pk, sizeof pk, &pos, ibuf, 1, t, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Pack_external("external32", ibuf, 1, t, pk, sizeof pk, &a));
        ROW(MPI_ERR_TYPE, MPI_Unpack_external("external32", pk, sizeof pk, &a, ibuf, 1, t));
        if (t == uncommitted) {
            continue; /* the rest accept an uncommitted type */
        }
        ROW(MPI_ERR_TYPE, MPI_Pack_size(1, t, MPI_COMM_WORLD, &v));
        ROW(MPI_ERR_TYPE, MPI_Pack_external_size("external32", 1, t, &a));
        ROW(MPI_ERR_TYPE, MPI_Get_count(&st, t, &v));
        ROW(MPI_ERR_TYPE, MPI_Get_elements(&st, t, &v));
        ROW(MPI_ERR_TYPE, MPI_Get_elements_x(&st, t, &cnt));
        ROW(MPI_ERR_TYPE, MPI_Status_set_elements(&st, t, 1));
        ROW(MPI_ERR_TYPE, MPI_Status_set_elements_x(&st, t, 1));
        ROW(MPI_ERR_TYPE, MPI_Type_commit(&t));
        out = t;
        ROW(MPI_ERR_TYPE, MPI_Type_free(&out));
        ROW(MPI_ERR_TYPE, MPI_Type_dup(t, &out));
        ROW(MPI_ERR_TYPE, MPI_Type_size(t, &v));
        ROW(MPI_ERR_TYPE, MPI_Type_size_x(t, &cnt));
        ROW(MPI_ERR_TYPE, MPI_Type_extent(t, &a));
        ROW(MPI_ERR_TYPE, MPI_Type_lb(t, &a));
        ROW(MPI_ERR_TYPE, MPI_Type_ub(t, &a));
        ROW(MPI_ERR_TYPE, MPI_Type_get_extent(t, &a, &b));
        ROW(MPI_ERR_TYPE, MPI_Type_get_extent_x(t, &cnt, &cnt2));
        ROW(MPI_ERR_TYPE, MPI_Type_get_true_extent(t, &a, &b));
        ROW(MPI_ERR_TYPE, MPI_Type_get_true_extent_x(t, &cnt, &cnt2));
        ROW(MPI_ERR_TYPE, MPI_Type_contiguous(1, t, &out));
        ROW(MPI_ERR_TYPE, MPI_Type_vector(1, 1, 1, t, &out));
        ROW(MPI_ERR_TYPE, MPI_Type_create_hvector(1, 1, 4, t, &out));
        ROW(MPI_ERR_TYPE, MPI_Type_hvector(1, 1, 4, t, &out));
        {
            int bl[1] = {1}, di[1] = {0};
            MPI_Aint ad[1] = {0};
            MPI_Datatype ts[1] = {t};
            ROW(MPI_ERR_TYPE, MPI_Type_indexed(1, bl, di, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_hindexed(1, bl, ad, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_hindexed(1, bl, ad, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_indexed_block(1, 1, di, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_hindexed_block(1, 1, ad, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_struct(1, bl, ad, ts, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_struct(1, bl, ad, ts, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_resized(t, 0, 4, &out));
            int sz[1] = {2}, sub[1] = {1}, st0[1] = {0};
            ROW(MPI_ERR_TYPE, MPI_Type_create_subarray(1, sz, sub, st0, MPI_ORDER_C, t, &out));
            int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {1};
            ROW(MPI_ERR_TYPE, MPI_Type_create_darray(1, 0, 1, sz, dist, darg, ps, MPI_ORDER_C, t,
                                                     &out));
            MPI_Count cbl[1] = {1}, cdi[1] = {0};
            ROW(MPI_ERR_TYPE, MPI_Type_contiguous_c(1, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_vector_c(1, 1, 1, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_hvector_c(1, 1, 4, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_indexed_c(1, cbl, cdi, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_hindexed_c(1, cbl, cdi, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_indexed_block_c(1, 1, cdi, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_hindexed_block_c(1, 1, cdi, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_struct_c(1, cbl, cdi, ts, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_resized_c(t, 0, 4, &out));
            MPI_Count csz[1] = {2}, csub[1] = {1}, cst[1] = {0};
            ROW(MPI_ERR_TYPE, MPI_Type_create_subarray_c(1, csz, csub, cst, MPI_ORDER_C, t, &out));
            ROW(MPI_ERR_TYPE, MPI_Type_create_darray_c(1, 0, 1, csz, dist, darg, ps, MPI_ORDER_C,
                                                       t, &out));
        }
        ROW(MPI_ERR_TYPE, MPI_Type_size_c(t, &cnt));
        ROW(MPI_ERR_TYPE, MPI_Type_get_extent_c(t, &cnt, &cnt2));
        ROW(MPI_ERR_TYPE, MPI_Type_get_true_extent_c(t, &cnt, &cnt2));
        ROW(MPI_ERR_TYPE, MPI_Get_elements_c(&st, t, &cnt));
        ROW(MPI_ERR_TYPE, MPI_Pack_c(ibuf, 1, t, pk, sizeof pk, &cnt, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Pack_size_c(1, t, MPI_COMM_WORLD, &cnt));
        cnt = 0;
        ROW(MPI_ERR_TYPE, MPI_Unpack_c(pk, sizeof pk, &cnt, ibuf, 1, t, MPI_COMM_WORLD));
        ROW(MPI_ERR_TYPE, MPI_Pack_external_c("external32", ibuf, 1, t, pk, sizeof pk, &cnt));
        ROW(MPI_ERR_TYPE, MPI_Unpack_external_c("external32", pk, sizeof pk, &cnt, ibuf, 1, t));
        ROW(MPI_ERR_TYPE, MPI_Pack_external_size_c("external32", 1, t, &cnt));
        {
            int ni, na, nd, comb;
            int ints[4];
            MPI_Aint adds[4];
            MPI_Datatype tys[4];
            ROW(MPI_ERR_TYPE, MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
            ROW(MPI_ERR_TYPE, MPI_Type_get_contents(t, 4, 4, 4, ints, adds, tys));
            MPI_Count ci, ca, cl, cd, larges[4];
            ROW(MPI_ERR_TYPE, MPI_Type_get_envelope_c(t, &ci, &ca, &cl, &cd, &comb));
            ROW(MPI_ERR_TYPE, MPI_Type_get_contents_c(t, 4, 4, 4, 4, ints, adds, larges, tys));
            ROW(MPI_ERR_TYPE, MPI_Get_count_c(&st, t, &ci));
#ifdef OXMPI
            /* MPI-4.0/4.1 calls MPICH 4.0.2 lacks */
            ROW(MPI_ERR_TYPE, MPI_Status_set_elements_c(&st, t, 1));
            ROW(MPI_ERR_TYPE, MPI_Type_get_value_index(t, MPI_INT, &tys[0]));
            ROW(MPI_ERR_TYPE, MPI_Type_get_value_index(MPI_INT, t, &tys[0]));
#endif
        }
        {
            char name[MPI_MAX_OBJECT_NAME];
            ROW(MPI_ERR_TYPE, MPI_Type_set_name(t, "x"));
            /* MPI_DATATYPE_NULL has a name (tested in env/null_names_strict). */
            if (t != MPI_DATATYPE_NULL)
                ROW(MPI_ERR_TYPE, MPI_Type_get_name(t, name, &v));
        }
        {
            void *val;
            int flag;
            ROW(MPI_ERR_TYPE, MPI_Type_set_attr(t, type_keyval, NULL));
            ROW(MPI_ERR_TYPE, MPI_Type_get_attr(t, type_keyval, &val, &flag));
            ROW(MPI_ERR_TYPE, MPI_Type_delete_attr(t, type_keyval));
        }
    }

    /* freeing or committing what cannot be */
    out = MPI_INT;
    ROW(MPI_ERR_TYPE, MPI_Type_free(&out));
    ROW(MPI_ERR_ARG, MPI_Type_commit(NULL));
    ROW(MPI_ERR_ARG, MPI_Type_free(NULL));
    /* a predefined type has no contents */
    {
        int ints[4];
        MPI_Aint adds[4];
        MPI_Datatype tys[4];
        ROW2(MPI_ERR_TYPE, MPI_ERR_ARG, MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, adds, tys));
    }
    /* arrays too short for the contents */
    {
        MPI_Datatype vt;
        MTEST_CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &vt));
        int ints[4];
        MPI_Aint adds[4];
        MPI_Datatype tys[4];
        ROW(MPI_ERR_ARG, MPI_Type_get_contents(vt, 1, 0, 1, ints, adds, tys));
        MTEST_CALL(MPI_Type_free(&vt));
    }
}

/* ---- counts, ranks, roots, tags ------------------------------------------------------- */

static void bad_counts(void)
{
    MPI_Request r;
    MPI_Datatype out;
    int pos = 0, v;
    MPI_Aint a;
    MPI_Count cnt;
    char pk[64];
    ROW(MPI_ERR_COUNT, MPI_Send(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Ssend(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Isend(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Ibsend(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Issend(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Irsend(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Bsend_init(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Ssend_init(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Rsend_init(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Recv(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    ROW(MPI_ERR_COUNT, MPI_Irecv(ibuf, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_COUNT, MPI_Sendrecv(ibuf, 1, MPI_INT, rank, 0, ibuf2, -1, MPI_INT, rank, 0,
                                    MPI_COMM_WORLD, &st));
    ROW(MPI_ERR_COUNT, MPI_Sendrecv_replace(ibuf, -1, MPI_INT, rank, 0, rank, 0, MPI_COMM_WORLD,
                                            &st));
    ROW(MPI_ERR_COUNT, MPI_Bcast(ibuf, -1, MPI_INT, 0, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Gather(ibuf, -1, MPI_INT, ibuf2, 1, MPI_INT, 0, MPI_COMM_SELF));
    ROW(MPI_ERR_COUNT, MPI_Scatter(ibuf, 1, MPI_INT, ibuf2, -1, MPI_INT, 0, MPI_COMM_SELF));
    ROW(MPI_ERR_COUNT, MPI_Allgather(ibuf, -1, MPI_INT, ibuf2, 1, MPI_INT, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Alltoall(ibuf, 1, MPI_INT, ibuf2, -1, MPI_INT, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Reduce(ibuf, ibuf2, -1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Allreduce(ibuf, ibuf2, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Reduce_scatter_block(ibuf, ibuf2, -1, MPI_INT, MPI_SUM,
                                                MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Scan(ibuf, ibuf2, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Exscan(ibuf, ibuf2, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Reduce_local(ibuf, ibuf2, -1, MPI_INT, MPI_SUM));
    {
        int counts[1] = {-1}, displs[1] = {0};
        ROW(MPI_ERR_COUNT, MPI_Reduce_scatter(ibuf, ibuf2, counts, MPI_INT, MPI_SUM,
                                              MPI_COMM_SELF));
        ROW(MPI_ERR_COUNT, MPI_Gatherv(ibuf, 1, MPI_INT, ibuf2, counts, displs, MPI_INT, 0,
                                       MPI_COMM_SELF));
        ROW(MPI_ERR_COUNT, MPI_Scatterv(ibuf, counts, displs, MPI_INT, ibuf2, 1, MPI_INT, 0,
                                        MPI_COMM_SELF));
        ROW(MPI_ERR_COUNT, MPI_Allgatherv(ibuf, 1, MPI_INT, ibuf2, counts, displs, MPI_INT,
                                          MPI_COMM_SELF));
        ROW(MPI_ERR_COUNT, MPI_Alltoallv(ibuf, counts, displs, MPI_INT, ibuf2, counts, displs,
                                         MPI_INT, MPI_COMM_SELF));
        MPI_Datatype ts[1] = {MPI_INT};
        ROW(MPI_ERR_COUNT, MPI_Alltoallw(ibuf, counts, displs, ts, ibuf2, counts, displs, ts,
                                         MPI_COMM_SELF));
    }
    ROW(MPI_ERR_COUNT, MPI_Pack(ibuf, -1, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_WORLD));
    ROW(MPI_ERR_COUNT, MPI_Unpack(pk, sizeof pk, &pos, ibuf, -1, MPI_INT, MPI_COMM_WORLD));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &v));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Pack_size_c(-1, MPI_INT, MPI_COMM_WORLD, &cnt));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Pack_external_size("external32", -1, MPI_INT, &a));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Pack_external("external32", ibuf, -1, MPI_INT, pk,
                                                       sizeof pk, &a));
    /* output space too small; input too short */
    pos = 0;
    ROW2(MPI_ERR_TRUNCATE, MPI_ERR_ARG, MPI_Pack(ibuf, 16, MPI_INT, pk, 8, &pos, MPI_COMM_WORLD));
    pos = 0;
    ROW2(MPI_ERR_TRUNCATE, MPI_ERR_ARG,
         MPI_Unpack(pk, 8, &pos, ibuf, 16, MPI_INT, MPI_COMM_WORLD));
    pos = 0;
    ROW(MPI_ERR_ARG, MPI_Pack(ibuf, 1, MPI_INT, pk, sizeof pk, NULL, MPI_COMM_WORLD));
    ROW(MPI_ERR_ARG, MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL));
    ROW2(MPI_ERR_ARG, MPI_ERR_UNSUPPORTED_DATAREP,
         MPI_Pack_external("no-such-rep", ibuf, 1, MPI_INT, pk, sizeof pk, &a));
    ROW2(MPI_ERR_ARG, MPI_ERR_UNSUPPORTED_DATAREP,
         MPI_Pack_external_size("no-such-rep", 1, MPI_INT, &a));
    ROW(MPI_ERR_ARG, MPI_Pack_external(NULL, ibuf, 1, MPI_INT, pk, sizeof pk, &a));
    /* datatype constructors */
    ROW(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &out));
    ROW(MPI_ERR_COUNT, MPI_Type_contiguous_c(-1, MPI_INT, &out));
    ROW(MPI_ERR_COUNT, MPI_Type_vector(-1, 1, 1, MPI_INT, &out));
    ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Type_vector(1, -1, 1, MPI_INT, &out));
    ROW(MPI_ERR_COUNT, MPI_Type_create_hvector(-1, 1, 4, MPI_INT, &out));
    {
        int bl[2] = {1, -1}, di[2] = {0, 4};
        MPI_Aint ad[2] = {0, 16};
        MPI_Datatype ts[2] = {MPI_INT, MPI_INT};
        ROW(MPI_ERR_COUNT, MPI_Type_indexed(-1, bl, di, MPI_INT, &out));
        ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Type_indexed(2, bl, di, MPI_INT, &out));
        ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &out));
        ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Type_create_struct(2, bl, ad, ts, &out));
        ROW(MPI_ERR_COUNT, MPI_Type_create_struct(-1, bl, ad, ts, &out));
        ROW(MPI_ERR_ARG, MPI_Type_create_struct(2, bl, NULL, ts, &out));
        ROW(MPI_ERR_ARG, MPI_Type_indexed(2, NULL, di, MPI_INT, &out));
        ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Type_create_indexed_block(1, -1, di, MPI_INT, &out));
        ROW(MPI_ERR_COUNT, MPI_Type_create_hindexed_block(-1, 1, ad, MPI_INT, &out));
        ROW(MPI_ERR_ARG, MPI_Type_contiguous(1, MPI_INT, NULL));
    }
    {
        int sz[2] = {4, 4}, sub[2] = {5, 1}, start[2] = {0, 0};
        ROW(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, &out));
        sub[0] = 2;
        start[0] = 3; /* start + subsize > size */
        ROW(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, &out));
        start[0] = 0;
        ROW(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, start, 12345, MPI_INT, &out));
        ROW2(MPI_ERR_DIMS, MPI_ERR_ARG,
             MPI_Type_create_subarray(0, sz, sub, start, MPI_ORDER_C, MPI_INT, &out));
        int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {1, 1};
        ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Type_create_darray(1, 1, 2, sz, dist, darg, ps,
                                                               MPI_ORDER_C, MPI_INT, &out));
        ps[0] = 2; /* process grid 2 x 1 does not match size 1 */
        ROW(MPI_ERR_ARG, MPI_Type_create_darray(1, 0, 2, sz, dist, darg, ps, MPI_ORDER_C, MPI_INT,
                                                &out));
        ps[0] = 1;
        dist[0] = 999;
        ROW(MPI_ERR_ARG, MPI_Type_create_darray(1, 0, 2, sz, dist, darg, ps, MPI_ORDER_C, MPI_INT,
                                                &out));
    }
    /* status element counts */
    ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Status_set_elements(&st, MPI_INT, -1));
    ROW2(MPI_ERR_ARG, MPI_ERR_COUNT, MPI_Status_set_elements_x(&st, MPI_INT, -1));
    /* completion calls */
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Waitall(-1, &r, MPI_STATUSES_IGNORE));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Testall(-1, &r, &v, MPI_STATUSES_IGNORE));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Waitany(-1, &r, &v, &st));
    ROW2(MPI_ERR_COUNT, MPI_ERR_ARG, MPI_Startall(-1, &r));
    /* buffers */
    ROW2(MPI_ERR_ARG, MPI_ERR_BUFFER, MPI_Buffer_attach(pk, -1));
    ROW2(MPI_ERR_ARG, MPI_ERR_NO_MEM, MPI_Alloc_mem(-1, MPI_INFO_NULL, &a));
}

static void bad_ranks_tags(void)
{
    MPI_Request r;
    int flag;
    int ub = mtest_tag_ub();
    int bad_ranks[3] = {size, -5, MPI_ANY_SOURCE};
    for (int i = 0; i < 3; i++) {
        int d = bad_ranks[i];
        ROW(MPI_ERR_RANK, MPI_Send(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_RANK, MPI_Bsend(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_RANK, MPI_Ssend(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_RANK, MPI_Rsend(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_RANK, MPI_Isend(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_RANK, MPI_Send_init(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_RANK, MPI_Sendrecv(ibuf, 1, MPI_INT, d, 0, ibuf2, 1, MPI_INT, rank, 0,
                                       MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_RANK, MPI_Sendrecv_replace(ibuf, 1, MPI_INT, d, 0, rank, 0, MPI_COMM_WORLD,
                                               &st));
        if (d == MPI_ANY_SOURCE) {
            continue; /* a valid source */
        }
        ROW(MPI_ERR_RANK, MPI_Recv(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_RANK, MPI_Irecv(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_RANK, MPI_Recv_init(ibuf, 1, MPI_INT, d, 0, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_RANK, MPI_Probe(d, 0, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_RANK, MPI_Iprobe(d, 0, MPI_COMM_WORLD, &flag, &st));
        /* roots */
        ROW(MPI_ERR_ROOT, MPI_Bcast(ibuf, 1, MPI_INT, d, MPI_COMM_WORLD));
        ROW(MPI_ERR_ROOT, MPI_Gather(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, d, MPI_COMM_WORLD));
        ROW(MPI_ERR_ROOT, MPI_Gatherv(ibuf, 1, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT, d,
                                      MPI_COMM_WORLD));
        ROW(MPI_ERR_ROOT, MPI_Scatter(ibuf, 1, MPI_INT, ibuf2, 1, MPI_INT, d, MPI_COMM_WORLD));
        ROW(MPI_ERR_ROOT, MPI_Scatterv(ibuf, ibuf, ibuf, MPI_INT, ibuf2, 1, MPI_INT, d,
                                       MPI_COMM_WORLD));
        ROW(MPI_ERR_ROOT, MPI_Reduce(ibuf, ibuf2, 1, MPI_INT, MPI_SUM, d, MPI_COMM_WORLD));
        MPI_Comm out;
        ROW(MPI_ERR_RANK, MPI_Intercomm_create(MPI_COMM_WORLD, d, MPI_COMM_WORLD, 0, 0, &out));
    }
    int bad_tags[3] = {-5, ub < INT_MAX ? ub + 1 : -6, MPI_ANY_TAG};
    for (int i = 0; i < 3; i++) {
        int t = bad_tags[i];
        ROW(MPI_ERR_TAG, MPI_Send(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD));
        ROW(MPI_ERR_TAG, MPI_Ssend(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD));
        ROW(MPI_ERR_TAG, MPI_Isend(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TAG, MPI_Send_init(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TAG, MPI_Sendrecv(ibuf, 1, MPI_INT, rank, t, ibuf2, 1, MPI_INT, rank, 0,
                                      MPI_COMM_WORLD, &st));
        if (t == MPI_ANY_TAG) {
            continue;
        }
        ROW(MPI_ERR_TAG, MPI_Recv(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TAG, MPI_Irecv(ibuf, 1, MPI_INT, rank, t, MPI_COMM_WORLD, &r));
        ROW(MPI_ERR_TAG, MPI_Probe(rank, t, MPI_COMM_WORLD, &st));
        ROW(MPI_ERR_TAG, MPI_Iprobe(rank, t, MPI_COMM_WORLD, &flag, &st));
        MPI_Comm out;
        ROW(MPI_ERR_TAG, MPI_Comm_create_group(MPI_COMM_WORLD, world_group, t, &out));
    }
    /* a buffered send with no buffer attached */
    ROW(MPI_ERR_BUFFER, MPI_Bsend(ibuf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD));
}

/* ---- MPI_IN_PLACE where a call does not accept it ------------------------------------------ */

static void misplaced_in_place(void)
{
    MPI_Request r;
    MPI_Aint a = 0;
    int pos = 0;
    char pk[64];
    void *ip = MPI_IN_PLACE;
#define IPROW(call) ROW2(MPI_ERR_BUFFER, MPI_ERR_ARG, call)
    IPROW(MPI_Send(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    IPROW(MPI_Ssend(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD));
    IPROW(MPI_Isend(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    IPROW(MPI_Send_init(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    IPROW(MPI_Recv(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    IPROW(MPI_Irecv(ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
    IPROW(MPI_Sendrecv(ip, 1, MPI_INT, rank, 0, ibuf2, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    IPROW(MPI_Sendrecv(ibuf, 1, MPI_INT, rank, 0, ip, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));
    IPROW(MPI_Sendrecv_replace(ip, 1, MPI_INT, rank, 0, rank, 0, MPI_COMM_WORLD, &st));
    IPROW(MPI_Bcast(ip, 1, MPI_INT, 0, MPI_COMM_WORLD));
    /* receive buffers of collectives */
    IPROW(MPI_Allreduce(ibuf, ip, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    IPROW(MPI_Reduce(ibuf, ip, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF));
    IPROW(MPI_Reduce_scatter_block(ibuf, ip, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    {
        int one[1] = {1};
        IPROW(MPI_Reduce_scatter(ibuf, ip, one, MPI_INT, MPI_SUM, MPI_COMM_SELF));
        IPROW(MPI_Gatherv(ibuf, 1, MPI_INT, ip, one, ibuf, MPI_INT, 0, MPI_COMM_SELF));
        IPROW(MPI_Scatterv(ip, one, ibuf, MPI_INT, ibuf2, 1, MPI_INT, 0, MPI_COMM_SELF));
    }
    IPROW(MPI_Scan(ibuf, ip, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    IPROW(MPI_Exscan(ibuf, ip, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    IPROW(MPI_Gather(ibuf, 1, MPI_INT, ip, 1, MPI_INT, 0, MPI_COMM_SELF));
    IPROW(MPI_Scatter(ip, 1, MPI_INT, ibuf2, 1, MPI_INT, 0, MPI_COMM_SELF));
    IPROW(MPI_Allgather(ibuf, 1, MPI_INT, ip, 1, MPI_INT, MPI_COMM_WORLD));
    IPROW(MPI_Allgatherv(ibuf, 1, MPI_INT, ip, ibuf, ibuf, MPI_INT, MPI_COMM_WORLD));
    IPROW(MPI_Alltoall(ibuf, 1, MPI_INT, ip, 1, MPI_INT, MPI_COMM_WORLD));
    IPROW(MPI_Alltoallv(ibuf, ibuf, ibuf, MPI_INT, ip, ibuf, ibuf, MPI_INT, MPI_COMM_WORLD));
    {
        MPI_Datatype ts[64];
        for (int i = 0; i < 64; i++) {
            ts[i] = MPI_INT;
        }
        IPROW(MPI_Alltoallw(ibuf, ibuf, ibuf, ts, ip, ibuf, ibuf, ts, MPI_COMM_WORLD));
    }
    /* local reductions and packing */
    IPROW(MPI_Reduce_local(ip, ibuf2, 1, MPI_INT, MPI_SUM));
    IPROW(MPI_Reduce_local(ibuf, ip, 1, MPI_INT, MPI_SUM));
    IPROW(MPI_Pack(ip, 1, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_WORLD));
    pos = 0;
    IPROW(MPI_Pack(ibuf, 1, MPI_INT, ip, sizeof pk, &pos, MPI_COMM_WORLD));
    pos = 0;
    IPROW(MPI_Unpack(pk, sizeof pk, &pos, ip, 1, MPI_INT, MPI_COMM_WORLD));
    IPROW(MPI_Pack_external("external32", ip, 1, MPI_INT, pk, sizeof pk, &a));
    a = 0;
    IPROW(MPI_Unpack_external("external32", pk, sizeof pk, &a, ip, 1, MPI_INT));
#undef IPROW
}

/* ---- requests ------------------------------------------------------------------------------ */

static void bad_requests(void)
{
    int flag, idx, outc, indices[2];
    MPI_Request bad[2];
    bad[0] = foreign_req;
    bad[1] = bogus_req;
    for (int i = 0; i < 2; i++) {
        MPI_Request r = bad[i];
        MPI_Request arr[2];
        arr[0] = MPI_REQUEST_NULL;
        arr[1] = r;
        ROW(MPI_ERR_REQUEST, MPI_Wait(&r, &st));
        ROW(MPI_ERR_REQUEST, MPI_Test(&r, &flag, &st));
        ROW(MPI_ERR_REQUEST, MPI_Request_free(&r));
        ROW(MPI_ERR_REQUEST, MPI_Request_get_status(r, &flag, &st));
        ROW(MPI_ERR_REQUEST, MPI_Cancel(&r));
        ROW(MPI_ERR_REQUEST, MPI_Start(&r));
        ROW(MPI_ERR_REQUEST, MPI_Startall(2, arr));
        ROW2(MPI_ERR_REQUEST, MPI_ERR_IN_STATUS, MPI_Waitall(2, arr, MPI_STATUSES_IGNORE));
        ROW2(MPI_ERR_REQUEST, MPI_ERR_IN_STATUS, MPI_Testall(2, arr, &flag, MPI_STATUSES_IGNORE));
        ROW(MPI_ERR_REQUEST, MPI_Waitany(2, arr, &idx, &st));
        ROW(MPI_ERR_REQUEST, MPI_Testany(2, arr, &idx, &flag, &st));
        ROW2(MPI_ERR_REQUEST, MPI_ERR_IN_STATUS,
             MPI_Waitsome(2, arr, &outc, indices, MPI_STATUSES_IGNORE));
        ROW2(MPI_ERR_REQUEST, MPI_ERR_IN_STATUS,
             MPI_Testsome(2, arr, &outc, indices, MPI_STATUSES_IGNORE));
        ROW(MPI_ERR_REQUEST, MPI_Grequest_complete(r));
    }
    MPI_Request r = MPI_REQUEST_NULL;
    ROW(MPI_ERR_REQUEST, MPI_Request_free(&r));
    ROW(MPI_ERR_REQUEST, MPI_Cancel(&r));
    ROW(MPI_ERR_REQUEST, MPI_Start(&r));
    ROW(MPI_ERR_REQUEST, MPI_Grequest_complete(MPI_REQUEST_NULL));
    /* MPI_Start on a request that is not persistent */
    MTEST_CALL(MPI_Isend(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    ROW(MPI_ERR_REQUEST, MPI_Start(&r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* MPI_Start on a persistent request that is already active */
    MTEST_CALL(MPI_Recv_init(ibuf, 1, MPI_INT, rank, 4321, MPI_COMM_WORLD, &r));
    MTEST_CALL(MPI_Start(&r));
    ROW(MPI_ERR_REQUEST, MPI_Start(&r));
    MTEST_CALL(MPI_Cancel(&r));
    MTEST_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_CALL(MPI_Request_free(&r));
    /* null pointers */
    ROW(MPI_ERR_ARG, MPI_Wait(NULL, &st));
    r = MPI_REQUEST_NULL;
    ROW(MPI_ERR_ARG, MPI_Wait(&r, NULL));
    ROW(MPI_ERR_ARG, MPI_Test(&r, NULL, &st));
    ROW(MPI_ERR_ARG, MPI_Test(NULL, &flag, &st));
    ROW(MPI_ERR_ARG, MPI_Request_get_status(r, NULL, &st));
    ROW(MPI_ERR_ARG, MPI_Request_free(NULL));
    ROW(MPI_ERR_ARG, MPI_Cancel(NULL));
    ROW(MPI_ERR_ARG, MPI_Start(NULL));
    ROW(MPI_ERR_ARG, MPI_Startall(1, NULL));
    ROW(MPI_ERR_ARG, MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE));
    ROW(MPI_ERR_ARG, MPI_Waitall(1, &r, NULL));
    ROW(MPI_ERR_ARG, MPI_Testall(1, &r, NULL, MPI_STATUSES_IGNORE));
    ROW(MPI_ERR_ARG, MPI_Waitany(1, &r, NULL, &st));
    ROW(MPI_ERR_ARG, MPI_Testany(1, &r, &idx, NULL, &st));
    ROW(MPI_ERR_ARG, MPI_Waitsome(1, &r, NULL, indices, MPI_STATUSES_IGNORE));
    ROW(MPI_ERR_ARG, MPI_Testsome(1, &r, &outc, NULL, MPI_STATUSES_IGNORE));
    ROW(MPI_ERR_ARG, MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, NULL));
    ROW(MPI_ERR_ARG, MPI_Isend(ibuf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Irecv(ibuf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Recv(ibuf, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Probe(rank, 0, MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Iprobe(rank, 0, MPI_COMM_WORLD, NULL, &st));
}

/* ---- operations --------------------------------------------------------------------------- */

static void bad_ops(void)
{
    int v;
    MPI_Op bad[3];
    bad[0] = MPI_OP_NULL;
    bad[1] = freed_op;
    bad[2] = foreign_op;
    for (int i = 0; i < 3; i++) {
        MPI_Op o = bad[i];
        ROW(MPI_ERR_OP, MPI_Reduce(ibuf, ibuf2, 1, MPI_INT, o, 0, MPI_COMM_WORLD));
        ROW(MPI_ERR_OP, MPI_Allreduce(ibuf, ibuf2, 1, MPI_INT, o, MPI_COMM_WORLD));
        ROW(MPI_ERR_OP, MPI_Reduce_scatter_block(ibuf, ibuf2, 1, MPI_INT, o, MPI_COMM_WORLD));
        ROW(MPI_ERR_OP, MPI_Reduce_scatter(ibuf, ibuf2, ibuf, MPI_INT, o, MPI_COMM_SELF));
        ROW(MPI_ERR_OP, MPI_Scan(ibuf, ibuf2, 1, MPI_INT, o, MPI_COMM_WORLD));
        ROW(MPI_ERR_OP, MPI_Exscan(ibuf, ibuf2, 1, MPI_INT, o, MPI_COMM_WORLD));
        ROW(MPI_ERR_OP, MPI_Reduce_local(ibuf, ibuf2, 1, MPI_INT, o));
        ROW(MPI_ERR_OP, MPI_Op_commutative(o, &v));
        MPI_Op f = o;
        ROW(MPI_ERR_OP, MPI_Op_free(&f));
    }
    /* a predefined op cannot be freed */
    MPI_Op f = MPI_SUM;
    ROW2(MPI_ERR_OP, MPI_ERR_ARG, MPI_Op_free(&f));
    /* an operation that is not defined for the type */
    double d[2] = {1, 2};
    ROW(MPI_ERR_OP, MPI_Allreduce(d, d + 1, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD));
    ROW(MPI_ERR_OP, MPI_Reduce_local(d, d + 1, 1, MPI_DOUBLE, MPI_LXOR));
    ROW2(MPI_ERR_OP, MPI_ERR_TYPE, MPI_Allreduce(ibuf, ibuf2, 1, MPI_2INT, MPI_SUM,
                                                 MPI_COMM_WORLD));
    ROW2(MPI_ERR_OP, MPI_ERR_TYPE, MPI_Reduce_local(ibuf, ibuf2, 1, MPI_INT, MPI_MAXLOC));
    /* null pointers */
    ROW(MPI_ERR_ARG, MPI_Op_create(sum_fn, 1, NULL));
    ROW(MPI_ERR_ARG, MPI_Op_create_c(sum_fn_c, 1, NULL));
    {
        MPI_Op o;
        ROW2(MPI_ERR_ARG, MPI_ERR_OP, MPI_Op_create(NULL, 1, &o));
        ROW2(MPI_ERR_ARG, MPI_ERR_OP, MPI_Op_create_c(NULL, 1, &o));
    }
    ROW(MPI_ERR_ARG, MPI_Op_commutative(MPI_SUM, NULL));
    ROW(MPI_ERR_ARG, MPI_Op_free(NULL));
}

/* ---- groups ---------------------------------------------------------------------------------- */

static void bad_groups(void)
{
    int v, ranks[64] = {0}, out_ranks[64];
    MPI_Group out;
    MPI_Comm cout;
    MPI_Group bad[3];
    bad[0] = MPI_GROUP_NULL;
    bad[1] = freed_group;
    bad[2] = foreign_group;
    for (int i = 0; i < 3; i++) {
        MPI_Group g = bad[i];
        int range[1][3] = {{0, 0, 1}};
        ROW(MPI_ERR_GROUP, MPI_Group_size(g, &v));
        ROW(MPI_ERR_GROUP, MPI_Group_rank(g, &v));
        ROW(MPI_ERR_GROUP, MPI_Group_translate_ranks(g, 1, ranks, world_group, out_ranks));
        ROW(MPI_ERR_GROUP, MPI_Group_translate_ranks(world_group, 1, ranks, g, out_ranks));
        ROW(MPI_ERR_GROUP, MPI_Group_compare(g, world_group, &v));
        ROW(MPI_ERR_GROUP, MPI_Group_union(g, world_group, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_intersection(world_group, g, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_difference(g, world_group, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_incl(g, 1, ranks, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_excl(g, 1, ranks, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_range_incl(g, 1, range, &out));
        ROW(MPI_ERR_GROUP, MPI_Group_range_excl(g, 1, range, &out));
        out = g;
        ROW(MPI_ERR_GROUP, MPI_Group_free(&out));
        ROW(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, g, &cout));
        ROW(MPI_ERR_GROUP, MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &cout));
    }
    /* ranks out of range, repeated, ranges with stride 0 */
    ranks[0] = size;
    ROW(MPI_ERR_RANK, MPI_Group_incl(world_group, 1, ranks, &out));
    ROW(MPI_ERR_RANK, MPI_Group_excl(world_group, 1, ranks, &out));
    ROW(MPI_ERR_RANK, MPI_Group_translate_ranks(world_group, 1, ranks, world_group, out_ranks));
    ranks[0] = 0;
    ranks[1] = 0;
    ROW2(MPI_ERR_RANK, MPI_ERR_ARG, MPI_Group_incl(world_group, 2, ranks, &out));
    ROW2(MPI_ERR_RANK, MPI_ERR_ARG, MPI_Group_excl(world_group, 2, ranks, &out));
    ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Group_incl(world_group, size + 1, ranks, &out));
    ROW(MPI_ERR_ARG, MPI_Group_incl(world_group, -1, ranks, &out));
    {
        int range[1][3] = {{0, 0, 0}};
        ROW2(MPI_ERR_ARG, MPI_ERR_RANK, MPI_Group_range_incl(world_group, 1, range, &out));
        range[0][2] = 1;
        range[0][1] = size;
        ROW2(MPI_ERR_RANK, MPI_ERR_ARG, MPI_Group_range_incl(world_group, 1, range, &out));
        ROW2(MPI_ERR_RANK, MPI_ERR_ARG, MPI_Group_range_excl(world_group, 1, range, &out));
        ROW(MPI_ERR_ARG, MPI_Group_range_incl(world_group, 1, NULL, &out));
    }
    /* null pointers */
    ROW(MPI_ERR_ARG, MPI_Group_size(world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_rank(world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_compare(world_group, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_union(world_group, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_intersection(world_group, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_difference(world_group, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_incl(world_group, 1, NULL, &out));
    ROW(MPI_ERR_ARG, MPI_Group_excl(world_group, 1, ranks, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_translate_ranks(world_group, 1, ranks, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Group_free(NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_group(MPI_COMM_WORLD, NULL));
}

/* ---- info objects --------------------------------------------------------------------------- */

static void bad_infos(void)
{
    int v, flag;
    MPI_Info out;
    MPI_Comm cout;
    char val[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    MPI_Info bad[3];
    bad[0] = MPI_INFO_NULL;
    bad[1] = freed_info;
    bad[2] = foreign_info;
    for (int i = 0; i < 3; i++) {
        MPI_Info in = bad[i];
        ROW(MPI_ERR_INFO, MPI_Info_set(in, "k", "v"));
        ROW(MPI_ERR_INFO, MPI_Info_delete(in, "k"));
        ROW(MPI_ERR_INFO, MPI_Info_get(in, "k", 10, val, &flag));
        ROW(MPI_ERR_INFO, MPI_Info_get_valuelen(in, "k", &v, &flag));
        v = sizeof val;
        ROW(MPI_ERR_INFO, MPI_Info_get_string(in, "k", &v, val, &flag));
        ROW(MPI_ERR_INFO, MPI_Info_get_nkeys(in, &v));
        ROW(MPI_ERR_INFO, MPI_Info_get_nthkey(in, 0, key));
        ROW(MPI_ERR_INFO, MPI_Info_dup(in, &out));
        out = in;
        ROW2(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Info_free(&out));
        ROW2(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Comm_set_info(MPI_COMM_WORLD, in));
        if (in != MPI_INFO_NULL) {
            /* MPI_INFO_NULL is a valid "no hints" argument in these */
            MPI_Aint p;
            ROW(MPI_ERR_INFO, MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &cout));
            ROW(MPI_ERR_INFO, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, in,
                                                  &cout));
            ROW(MPI_ERR_INFO, MPI_Alloc_mem(16, in, &p));
        }
    }
    /* keys and values */
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY] = 0; /* one character too long */
    ROW(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "v"));
    ROW(MPI_ERR_INFO_KEY, MPI_Info_get(info, key, 10, val, &flag));
    ROW(MPI_ERR_INFO_KEY, MPI_Info_delete(info, key));
    ROW(MPI_ERR_INFO_KEY, MPI_Info_get_valuelen(info, key, &v, &flag));
    ROW(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "v"));
    memset(val, 'v', sizeof val);
    val[MPI_MAX_INFO_VAL] = 0; /* one character too long */
    ROW(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", val));
    ROW(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "absent"));
    ROW(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 1, key));
    ROW(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, key));
    ROW(MPI_ERR_ARG, MPI_Info_get(info, "key", -1, val, &flag));
    /* null pointers */
    ROW(MPI_ERR_ARG, MPI_Info_create(NULL));
    ROW(MPI_ERR_ARG, MPI_Info_create_env(0, NULL, NULL));
    ROW2(MPI_ERR_ARG, MPI_ERR_INFO_KEY, MPI_Info_set(info, NULL, "v"));
    ROW2(MPI_ERR_ARG, MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", NULL));
    ROW(MPI_ERR_ARG, MPI_Info_get(info, "key", 10, val, NULL));
    ROW(MPI_ERR_ARG, MPI_Info_get_valuelen(info, "key", NULL, &flag));
    ROW(MPI_ERR_ARG, MPI_Info_get_string(info, "key", NULL, val, &flag));
    ROW(MPI_ERR_ARG, MPI_Info_get_nkeys(info, NULL));
    ROW(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 0, NULL));
    ROW(MPI_ERR_ARG, MPI_Info_dup(info, NULL));
    ROW(MPI_ERR_ARG, MPI_Info_free(NULL));
}

/* ---- error handlers and error codes ------------------------------------------------------- */

static void bad_errhandlers(void)
{
    MPI_Errhandler e;
    MPI_Errhandler bad[3];
    bad[0] = MPI_ERRHANDLER_NULL;
    bad[1] = freed_eh;
    bad[2] = foreign_eh;
    for (int i = 0; i < 3; i++) {
        ROW(MPI_ERR_ERRHANDLER, MPI_Comm_set_errhandler(MPI_COMM_WORLD, bad[i]));
        ROW(MPI_ERR_ERRHANDLER, MPI_Errhandler_set(MPI_COMM_WORLD, bad[i]));
        e = bad[i];
        ROW(MPI_ERR_ERRHANDLER, MPI_Errhandler_free(&e));
    }
    ROW(MPI_ERR_ARG, MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Errhandler_get(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Errhandler_free(NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_create_errhandler(eh_fn, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_create_errhandler(NULL, &e));
    ROW(MPI_ERR_ARG, MPI_Errhandler_create(NULL, &e));
    ROW(MPI_ERR_ARG, MPI_Errhandler_create(eh_fn, NULL));

    /* error codes and classes */
    int v;
    char s[MPI_MAX_ERROR_STRING];
    ROW(MPI_ERR_ARG, MPI_Error_class(-1, &v));
    ROW(MPI_ERR_ARG, MPI_Error_class(0x7fffff00, &v));
    ROW(MPI_ERR_ARG, MPI_Error_class(MPI_ERR_OTHER, NULL));
    ROW(MPI_ERR_ARG, MPI_Error_string(-1, s, &v));
    ROW(MPI_ERR_ARG, MPI_Error_string(MPI_ERR_OTHER, NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Error_string(MPI_ERR_OTHER, s, NULL));
    ROW(MPI_ERR_ARG, MPI_Add_error_class(NULL));
    ROW(MPI_ERR_ARG, MPI_Add_error_code(0x3ffffff0, &v)); /* no such class */
    ROW(MPI_ERR_ARG, MPI_Add_error_code(MPI_ERR_OTHER, NULL));
    ROW(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_OTHER, "predefined")); /* predefined code */
    ROW(MPI_ERR_ARG, MPI_Add_error_string(0x3ffffff0, "absent"));
    {
        int cls;
        MTEST_CALL(MPI_Add_error_class(&cls));
        ROW(MPI_ERR_ARG, MPI_Add_error_string(cls, NULL));
    }
}

/* ---- attributes and keyvals --------------------------------------------------------------- */

static void bad_keyvals(void)
{
    void *val;
    int flag, k;
    int bad[2];
    bad[0] = MPI_KEYVAL_INVALID;
    bad[1] = freed_keyval;
    for (int i = 0; i < 2; i++) {
        int kv = bad[i];
        ROW(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, kv, NULL));
        ROW(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &val, &flag));
        ROW(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, kv));
        ROW(MPI_ERR_KEYVAL, MPI_Attr_put(MPI_COMM_WORLD, kv, NULL));
        ROW(MPI_ERR_KEYVAL, MPI_Attr_get(MPI_COMM_WORLD, kv, &val, &flag));
        ROW(MPI_ERR_KEYVAL, MPI_Attr_delete(MPI_COMM_WORLD, kv));
        ROW(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, kv, NULL));
        ROW(MPI_ERR_KEYVAL, MPI_Type_get_attr(MPI_INT, kv, &val, &flag));
        ROW(MPI_ERR_KEYVAL, MPI_Type_delete_attr(MPI_INT, kv));
        k = kv;
        ROW(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
        k = kv;
        ROW(MPI_ERR_KEYVAL, MPI_Keyval_free(&k));
        k = kv;
        ROW(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&k));
    }
    /* a keyval of the wrong object kind */
    ROW(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, comm_keyval, NULL));
    ROW(MPI_ERR_KEYVAL, MPI_Type_get_attr(MPI_INT, comm_keyval, &val, &flag));
    ROW(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, type_keyval, NULL));
    ROW(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, type_keyval, &val, &flag));
    k = type_keyval;
    ROW(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
    k = comm_keyval;
    ROW(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&k));
    /* predefined attributes cannot be set, deleted or freed */
    ROW(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL));
    ROW(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
    k = MPI_TAG_UB;
    ROW(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
    /* null pointers */
    ROW(MPI_ERR_ARG, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag));
    ROW(MPI_ERR_ARG, MPI_Type_get_attr(MPI_INT, type_keyval, &val, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL,
                                            NULL));
    ROW(MPI_ERR_ARG, MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, NULL,
                                            NULL));
    ROW(MPI_ERR_ARG, MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, NULL, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_free_keyval(NULL));
    ROW(MPI_ERR_ARG, MPI_Type_free_keyval(NULL));
    ROW(MPI_ERR_ARG, MPI_Keyval_free(NULL));
}

/* ---- null output pointers and other argument errors ---------------------------------------- */

static void null_pointers(void)
{
    int v;
    MPI_Aint a;
    MPI_Count c;
    ROW(MPI_ERR_ARG, MPI_Comm_size(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_rank(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_dup(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_create(MPI_COMM_WORLD, world_group, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, 0, 0, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                         NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_free(NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_test_inter(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_get_info(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_set_name(MPI_COMM_WORLD, NULL));
    ROW(MPI_ERR_ARG, MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, 0, NULL));
    if (inter != MPI_COMM_NULL) {
        ROW(MPI_ERR_ARG, MPI_Comm_remote_size(inter, NULL));
        ROW(MPI_ERR_ARG, MPI_Intercomm_merge(inter, 0, NULL));
    }
    ROW(MPI_ERR_ARG, MPI_Type_size(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_size_x(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_size_c(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_extent(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_lb(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_ub(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_get_extent(MPI_INT, NULL, &a));
    ROW(MPI_ERR_ARG, MPI_Type_get_extent_c(MPI_INT, &c, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_get_extent_x(MPI_INT, NULL, &c));
    ROW(MPI_ERR_ARG, MPI_Type_get_true_extent(MPI_INT, &a, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_get_true_extent_c(MPI_INT, NULL, &c));
    ROW(MPI_ERR_ARG, MPI_Type_get_true_extent_x(MPI_INT, &c, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_dup(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_set_name(MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_get_name(MPI_INT, NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Type_get_envelope(MPI_INT, NULL, &v, &v, &v));
    ROW(MPI_ERR_ARG, MPI_Get_address(ibuf, NULL));
    ROW(MPI_ERR_ARG, MPI_Address(ibuf, NULL));
    ROW(MPI_ERR_ARG, MPI_Get_count(NULL, MPI_INT, &v));
    ROW(MPI_ERR_ARG, MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &v));
    ROW(MPI_ERR_ARG, MPI_Get_count(&st, MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Get_elements(NULL, MPI_INT, &v));
    ROW(MPI_ERR_ARG, MPI_Get_elements_c(&st, MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Get_elements_x(MPI_STATUS_IGNORE, MPI_INT, &c));
    ROW(MPI_ERR_ARG, MPI_Test_cancelled(NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Test_cancelled(&st, NULL));
    ROW(MPI_ERR_ARG, MPI_Status_set_cancelled(NULL, 1));
    ROW(MPI_ERR_ARG, MPI_Status_set_elements(NULL, MPI_INT, 1));
    ROW(MPI_ERR_ARG, MPI_Status_set_elements_x(NULL, MPI_INT, 1));
    ROW(MPI_ERR_ARG, MPI_Get_count_c(NULL, MPI_INT, &c));
    ROW(MPI_ERR_ARG, MPI_Get_count_c(&st, MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_get_envelope_c(MPI_INT, &c, &c, NULL, &c, &v));
    ROW(MPI_ERR_ARG, MPI_Type_create_f90_integer(9, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_create_f90_real(6, MPI_UNDEFINED, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_create_f90_complex(6, MPI_UNDEFINED, NULL));
    ROW(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, NULL));
#ifdef OXMPI
    ROW(MPI_ERR_ARG, MPI_Status_set_elements_c(NULL, MPI_INT, 1));
    ROW(MPI_ERR_ARG, MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, NULL));
    ROW(MPI_ERR_ARG, MPI_Get_hw_resource_info(NULL));
    ROW(MPI_ERR_ARG, MPI_Remove_error_class(MPI_ERR_RANK));
    ROW(MPI_ERR_ARG, MPI_Remove_error_code(MPI_ERR_LASTCODE));
    ROW(MPI_ERR_ARG, MPI_Remove_error_string(-1));
#endif
    {
        MPI_Fint f[MPI_F_STATUS_SIZE];
        MPI_F08_status f08;
        ROW(MPI_ERR_ARG, MPI_Status_c2f(NULL, f));
        ROW(MPI_ERR_ARG, MPI_Status_c2f(&st, NULL));
        ROW(MPI_ERR_ARG, MPI_Status_f2c(NULL, &st));
        ROW(MPI_ERR_ARG, MPI_Status_f2c(f, NULL));
#ifdef OXMPI
        /* the mpi_f08 conversions (MPICH 4.0 built without Fortran 2008 lacks them) */
        ROW(MPI_ERR_ARG, MPI_Status_c2f08(NULL, &f08));
        ROW(MPI_ERR_ARG, MPI_Status_c2f08(&st, NULL));
        ROW(MPI_ERR_ARG, MPI_Status_f082c(NULL, &st));
        ROW(MPI_ERR_ARG, MPI_Status_f082c(&f08, NULL));
        ROW(MPI_ERR_ARG, MPI_Status_f2f08(NULL, &f08));
        ROW(MPI_ERR_ARG, MPI_Status_f2f08(f, NULL));
        ROW(MPI_ERR_ARG, MPI_Status_f082f(NULL, f));
        ROW(MPI_ERR_ARG, MPI_Status_f082f(&f08, NULL));
#else
        (void)f08;
#endif
        ROW2(MPI_ERR_ARG, MPI_ERR_OTHER, MPI_Status_c2f(MPI_STATUS_IGNORE, f));
        ROW2(MPI_ERR_ARG, MPI_ERR_OTHER, MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st));
    }
    ROW(MPI_ERR_ARG, MPI_Initialized(NULL));
    ROW(MPI_ERR_ARG, MPI_Finalized(NULL));
    ROW(MPI_ERR_ARG, MPI_Get_version(NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Get_library_version(NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Get_processor_name(NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Query_thread(NULL));
    ROW(MPI_ERR_ARG, MPI_Is_thread_main(NULL));
    ROW(MPI_ERR_ARG, MPI_Alloc_mem(16, MPI_INFO_NULL, NULL));
    ROW(MPI_ERR_BASE, MPI_Free_mem(ibuf)); /* not from MPI_Alloc_mem */
    ROW(MPI_ERR_ARG, MPI_Buffer_detach(NULL, &v));
    ROW(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL,
                                         (MPI_Comm *)&v));
    ROW(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, (MPI_Comm *)&v));
    /* a buffer attached twice */
    {
        static char bbuf[1024];
        MTEST_CALL(MPI_Buffer_attach(bbuf, sizeof bbuf));
        ROW2(MPI_ERR_BUFFER, MPI_ERR_OTHER, MPI_Buffer_attach(bbuf, sizeof bbuf));
        void *p;
        MTEST_CALL(MPI_Buffer_detach(&p, &v));
    }
    /* initialising twice */
    ROW(MPI_ERR_OTHER, MPI_Init(NULL, NULL));
    ROW(MPI_ERR_OTHER, MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &v));
    /* aliased send and receive buffers of a collective (not MPI_IN_PLACE) */
    ROW2(MPI_ERR_BUFFER, MPI_ERR_ARG, MPI_Allreduce(ibuf, ibuf, 1, MPI_INT, MPI_SUM,
                                                    MPI_COMM_WORLD));
    /* unequal send and receive signatures on one process */
    ROW2(MPI_ERR_TRUNCATE, MPI_ERR_COUNT, MPI_Allgather(ibuf, 2, MPI_INT, ibuf2, 1, MPI_INT,
                                                        MPI_COMM_SELF));
    /* NULL count/displacement arrays where the call reads them */
    ROW(MPI_ERR_ARG, MPI_Gatherv(ibuf, 1, MPI_INT, ibuf2, NULL, ibuf, MPI_INT, 0, MPI_COMM_SELF));
    ROW(MPI_ERR_ARG, MPI_Scatterv(ibuf, ibuf, NULL, MPI_INT, ibuf2, 1, MPI_INT, 0, MPI_COMM_SELF));
    ROW(MPI_ERR_ARG, MPI_Allgatherv(ibuf, 1, MPI_INT, ibuf2, NULL, ibuf, MPI_INT, MPI_COMM_WORLD));
    ROW(MPI_ERR_ARG, MPI_Alltoallv(ibuf, NULL, ibuf, MPI_INT, ibuf2, ibuf, ibuf, MPI_INT,
                                   MPI_COMM_WORLD));
    ROW(MPI_ERR_ARG, MPI_Alltoallw(ibuf, ibuf, ibuf, NULL, ibuf2, ibuf, ibuf, NULL,
                                   MPI_COMM_WORLD));
    ROW(MPI_ERR_ARG, MPI_Reduce_scatter(ibuf, ibuf2, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

/* After all of that the library must still work. */
static void still_works(void)
{
    int token = rank + 1, got = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MTEST_CALL(MPI_Sendrecv(&token, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_EQ("token from the left neighbour", left + 1, got);
    MTEST_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int sum = 0;
    MTEST_CALL(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MTEST_EQ("MPI_Allreduce sum", size * (size + 1) / 2, sum);
    if (inter != MPI_COMM_NULL) {
        int rsize = 0;
        MTEST_CALL(MPI_Comm_remote_size(inter, &rsize));
        MTEST_EQ("remote size", rank % 2 ? (size + 1) / 2 : size / 2, rsize);
        MTEST_CALL(MPI_Barrier(inter));
    }
    MPI_Comm dup;
    MTEST_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MTEST_CALL(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_MAX, dup));
    MTEST_EQ("MPI_Allreduce max on a new communicator", size, sum);
    MTEST_CALL(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    setup();
    bad_communicators();
    wrong_comm_kind();
    bad_topology();
    bad_datatypes();
    bad_counts();
    bad_ranks_tags();
    misplaced_in_place();
    bad_requests();
    bad_ops();
    bad_groups();
    bad_infos();
    bad_errhandlers();
    bad_keyvals();
    null_pointers();
    still_works();
    teardown();
    if (rank == 0) {
        fprintf(stderr, "%d rows checked\n", rows);
    }
    return mtest_finalize();
}
