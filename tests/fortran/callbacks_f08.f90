! mpi_f08's predefined attribute callbacks and link-time sentinels (MPICH keeps them in
! the modules mpi_f08_callbacks and mpi_f08_link_constants, which libmpichfort.so.12
! must provide for MPICH-built programs): MPI_COMM_DUP_FN copies an attribute to a
! duplicate, MPI_COMM_NULL_COPY_FN does not, MPI_TYPE_DUP_FN / MPI_WIN_DUP_FN likewise,
! MPI_*_NULL_DELETE_FN accept the deletion; a ring as a distributed graph with
! MPI_UNWEIGHTED is unweighted, one with weights returns them.
program callbacks_f08
  use mpi_f08
  use testutil
  implicit none
  integer, parameter :: ak = MPI_ADDRESS_KIND
  integer :: rank, nprocs, next, prev, kdup, knull, ktype, indeg, outdeg
  integer :: src(1), dst(1), sw(1), dw(1)
  integer(kind=ak) :: val
  logical :: flag, weighted
  type(MPI_Comm) :: dup, graph
  type(MPI_Datatype) :: t, t2

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kdup, 0_ak)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, knull, 0_ak)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, 1000_ak + rank)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, knull, 7_ak)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  val = -1
  call MPI_Comm_get_attr(dup, kdup, val, flag)
  call check(flag .and. val == 1000 + rank, 'MPI_COMM_DUP_FN copies the attribute')
  call MPI_Comm_get_attr(dup, knull, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not')
  call MPI_Comm_free(dup)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, kdup, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_DELETE_FN lets the attribute go')
  call MPI_Comm_free_keyval(kdup)
  call MPI_Comm_free_keyval(knull)

  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, ktype, 0_ak)
  call MPI_Type_contiguous(2, MPI_INTEGER, t)
  call MPI_Type_set_attr(t, ktype, 42_ak)
  call MPI_Type_dup(t, t2)
  call MPI_Type_get_attr(t2, ktype, val, flag)
  call check(flag .and. val == 42, 'MPI_TYPE_DUP_FN copies the attribute')
  call MPI_Type_free(t2)
  call MPI_Type_free(t)
  call MPI_Type_free_keyval(ktype)

  src(1) = prev
  dst(1) = next
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted)
  call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, &
             'a graph made with MPI_UNWEIGHTED is unweighted')
  call MPI_Comm_free(graph)
  sw(1) = 10 + prev
  dw(1) = 10 + rank
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, &
                                      MPI_INFO_NULL, .false., graph)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted)
  call check(weighted, 'a graph made with weights is weighted')
  src = -1
  dst = -1
  sw = -1
  dw = -1
  call MPI_Dist_graph_neighbors(graph, 1, src, sw, 1, dst, dw)
  call check(src(1) == prev .and. sw(1) == 10 + prev .and. dst(1) == next .and. &
             dw(1) == 10 + rank, 'MPI_Dist_graph_neighbors returns the weights')
  call MPI_Comm_free(graph)

  call report()
  call MPI_Finalize()
end program callbacks_f08
