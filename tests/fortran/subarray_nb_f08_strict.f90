! mpi_f08, built with oxmpi's module or (tests/fortran/run --abi mpif90.mpich) MPICH's,
! whose wrappers hand a noncontiguous section to oxmpi's descriptor entry points:
! noncontiguous sections in nonblocking calls, described by derived datatypes over their
! own elements. MPI_Isend / MPI_Irecv of 2-D sections; MPI_Ialltoall between 2-D sections
! divided among the processes in blocks of whole columns; MPI_Iallreduce from a
! contiguous array into a strided section (on rank 0 only: the others pass sections of
! the same layout) and MPI_Iscan from a strided section into a contiguous array; the
! gaps are left alone. MPI_Ireduce between sections of different layouts is refused
! with MPI_ERR_BUFFER, the request left alone. Strict: MPICH's mpi_f08 fails the
! reduction into a section (its derived datatype is refused by MPI_SUM).
program subarray_nb_f08_strict
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, ierr, cls, i, c, base
  integer :: v(10), w(10), u(10), m(4, 6), r(6, 4)
  integer, allocatable :: a(:, :), b(:, :)
  type(MPI_Request) :: req, reqs(2)
  logical :: ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)

  m = reshape([(rank * 1000 + i, i = 1, 24)], [4, 6])
  r = -1
  call MPI_Irecv(r(1:6:2, 1:4), 12, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(m(2:4, 1:6:2), 9, MPI_INTEGER, next, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  m = reshape([(prev * 1000 + i, i = 1, 24)], [4, 6])
  call check(ierr == MPI_SUCCESS .and. all(reshape(r(1:6:2, 1:3), [9]) == &
             reshape(m(2:4, 1:6:2), [9])) .and. all(r(2:6:2, :) == -1) .and. &
             all(r(1:6:2, 4) == -1), 'MPI_Isend / MPI_Irecv of 2-D sections')

  ! Process i's block: columns 2i+1 and 2i+2 of the section (rows 1 and 3).
  allocate(a(4, 2 * nprocs), b(3, 2 * nprocs))
  do c = 1, 2 * nprocs
    do i = 1, 4
      a(i, c) = rank * 1000 + i * 100 + c
    end do
  end do
  b = -1
  call MPI_Ialltoall(a(1:4:2, :), 4, MPI_INTEGER, b(1:3:2, :), 4, MPI_INTEGER, &
                     MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  ok = ierr == MPI_SUCCESS .and. all(b(2, :) == -1)
  do i = 0, nprocs - 1
    do c = 1, 2
      ok = ok .and. b(1, 2 * i + c) == i * 1000 + 100 + 2 * rank + c .and. &
           b(3, 2 * i + c) == i * 1000 + 300 + 2 * rank + c
    end do
  end do
  call check(ok, 'MPI_Ialltoall between 2-D sections (blocks of whole columns)')

  v = [(rank * 100 + i, i = 1, 10)]
  u = -1
  u(1:7:2) = v(1:4)
  w = -1
  base = 100 * nprocs * (nprocs - 1) / 2
  if (rank == 0) then
    call MPI_Iallreduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  else
    call MPI_Iallreduce(u(1:7:2), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(ierr == MPI_SUCCESS .and. all(w(1:7:2) == [(base + nprocs * i, i = 1, 4)]) .and. &
             all(w(2:10:2) == -1) .and. w(9) == -1 .and. &
             all(v == [(rank * 100 + i, i = 1, 10)]), &
             'MPI_Iallreduce, contiguous into a strided section')

  w = -1
  call MPI_Iscan(v(1:7:2), w(1:4), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(ierr == MPI_SUCCESS .and. &
             all(w(1:4) == [(100 * rank * (rank + 1) / 2 + (rank + 1) * (2 * i - 1), &
                             i = 1, 4)]) .and. all(w(5:10) == -1), &
             'MPI_Iscan, a strided section into a contiguous array')

  req = MPI_REQUEST_NULL
  call MPI_Ireduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Ireduce between sections of different layouts: MPI_ERR_BUFFER')
  call report()
  call MPI_Finalize()
end program subarray_nb_f08_strict
