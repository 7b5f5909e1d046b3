! The Fortran sentinels through mpif.h in free source form: MPI_BOTTOM with absolute
! addresses (MPI_Get_address, a struct type built from Fortran variables),
! MPI_IN_PLACE at the root of MPI_Reduce and MPI_Gather, MPI_STATUS_IGNORE and
! MPI_STATUSES_IGNORE; and derived types over Fortran arrays (a column of a matrix is
! contiguous, a row is a vector with the leading dimension as stride).
program sentinels
  use testutil
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, i, j, next, prev, stype, rtype, rowtype, req(2)
  integer :: gath(64)
  integer, volatile :: ival, ival2
  double precision, volatile :: dval, dval2
  integer(kind=MPI_ADDRESS_KIND) :: addrs(2)
  integer :: blens(2), types(2)
  integer :: mat(4, 5), mat2(4, 5), col(4)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Structs of two separate variables at absolute addresses, sent from and received
  ! into MPI_BOTTOM. (VOLATILE: the compiler cannot see that MPI reads or writes them.)
  ival = rank * 11
  dval = rank + 0.25d0
  ival2 = -1
  dval2 = -1
  blens = 1
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Get_address(ival, addrs(1), ierr)
  call MPI_Get_address(dval, addrs(2), ierr)
  call MPI_Type_create_struct(2, blens, addrs, types, stype, ierr)
  call MPI_Type_commit(stype, ierr)
  call MPI_Get_address(ival2, addrs(1), ierr)
  call MPI_Get_address(dval2, addrs(2), ierr)
  call MPI_Type_create_struct(2, blens, addrs, types, rtype, ierr)
  call MPI_Type_commit(rtype, ierr)
  call MPI_Irecv(MPI_BOTTOM, 1, rtype, prev, 1, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Send(MPI_BOTTOM, 1, stype, next, 1, MPI_COMM_WORLD, ierr)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE, ierr)
  call check(ival2 == prev * 11 .and. dval2 == prev + 0.25d0, 'MPI_BOTTOM struct')
  ! The same, nonblocking on both sides, completed with MPI_STATUSES_IGNORE.
  ival = ival + 1
  call MPI_Irecv(MPI_BOTTOM, 1, rtype, prev, 2, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(MPI_BOTTOM, 1, stype, next, 2, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
  call check(ival2 == prev * 11 + 1, 'MPI_BOTTOM nonblocking')
  call MPI_Type_free(stype, ierr)
  call MPI_Type_free(rtype, ierr)
  call check(stype == MPI_DATATYPE_NULL .and. rtype == MPI_DATATYPE_NULL, 'MPI_Type_free')

  ! MPI_IN_PLACE at the root.
  ival = rank + 1
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, ival, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check(ival == nprocs * (nprocs + 1) / 2, 'IN_PLACE reduce')
  else
    call MPI_Reduce(ival, ival2, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  gath = -1
  gath(rank + 1) = rank * 5
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check(all(gath(1:nprocs) == [(i * 5, i = 0, nprocs - 1)]), 'IN_PLACE gather')
  else
    call MPI_Gather(gath(rank + 1), 1, MPI_INTEGER, gath, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if

  ! Rows and columns of a Fortran (column-major) matrix.
  mat = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
  mat2 = 0
  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  ! Row 2 of the sender into row 3 of the receiver; column 4 into a vector.
  call MPI_Sendrecv(mat(2, 1), 1, rowtype, next, 4, mat2(3, 1), 1, rowtype, prev, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(mat(1, 4), 4, MPI_INTEGER, next, 5, col, 4, MPI_INTEGER, prev, 5, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, 5
    call check(mat2(3, j) == prev * 100 + 2 + (j - 1) * 4, 'row')
  end do
  do i = 1, 4
    call check(col(i) == prev * 100 + 12 + i, 'column')
  end do
  call check(mat2(2, 2) == 0 .and. mat2(4, 5) == 0, 'untouched')
  call MPI_Type_free(rowtype, ierr)

  call report()
  call MPI_Finalize(ierr)
end program sentinels
