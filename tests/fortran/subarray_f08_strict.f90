! mpi_f08: MPI_SUBARRAYS_SUPPORTED is .TRUE., and noncontiguous sections are the buffers
! of nonblocking, persistent and one-sided calls, described by derived datatypes over
! their own elements: MPI_Isend / MPI_Irecv of 2-D and reversed sections, MPI_Iallreduce
! between strided sections (MPI_MAX on the derived datatype), MPI_Ibcast, the large-count
! MPI_Isend_c, MPI_Put and MPI_Get with strided origin buffers, checked with values and
! gaps left alone; a rooted reduction from a contiguous array into a strided section is
! refused with MPI_ERR_BUFFER (subarray_nb_f08_strict: the unrooted ones work). The
! profiling names (PMPI_Comm_rank, PMPI_Isend) are bound too. oxmpi's module only (mtest-abi: oxmpi-header): MPICH's fails the
! reduction into a section.
program subarray_f08_strict
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, ierr, cls, i, prank
  integer :: v(10), w(10), m(4, 6), r(6, 4)
  type(MPI_Request) :: req, reqs(2)
  type(MPI_Win) :: win
  integer(kind=MPI_ADDRESS_KIND) :: sz

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call check(MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED is .TRUE.')
  call PMPI_Comm_rank(MPI_COMM_WORLD, prank, ierr)
  call check(ierr == MPI_SUCCESS .and. prank == rank, 'PMPI_Comm_rank')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  v = [(rank * 100 + i, i = 1, 10)]

  m = reshape([(rank * 1000 + i, i = 1, 24)], [4, 6])
  r = -1
  call MPI_Irecv(r(6:1:-2, 4:1:-1), 12, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(m(1:4:3, 1:6), 12, MPI_INTEGER, next, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  m = reshape([(prev * 1000 + i, i = 1, 24)], [4, 6])
  call check(ierr == MPI_SUCCESS .and. all(reshape(r(6:1:-2, 4:1:-1), [12]) == &
             reshape(m(1:4:3, 1:6), [12])) .and. all(r(5:1:-2, :) == -1), &
             'MPI_Isend / MPI_Irecv: 2-D sections, reversed')

  w = -1
  call PMPI_Irecv(w(2:10:2), 5, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1))
  call PMPI_Isend(v(1:10:2), 5, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2))
  call PMPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(w(2:10:2) == [(prev * 100 + i, i = 1, 10, 2)]) .and. all(w(1:9:2) == -1), &
             'PMPI_Isend / PMPI_Irecv of strided sections')

  w = -1
  call MPI_Iallreduce(v(1:7:2), w(2:8:2), 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(all(w(2:8:2) == [(100 * (nprocs - 1) + i, i = 1, 7, 2)]) .and. &
             all(w(1:9:2) == -1), 'MPI_Iallreduce (MPI_MAX) between strided sections')

  w = -1
  if (rank == nprocs - 1) w(10:1:-3) = [4, 3, 2, 1]
  call MPI_Ibcast(w(10:1:-3), 4, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call check(all(w(10:1:-3) == [4, 3, 2, 1]) .and. all(w([2, 3, 5, 6, 8, 9]) == -1), &
             'MPI_Ibcast on a reversed section')

  w = -1
  call MPI_Irecv(w(1:9:4), 3_MPI_COUNT_KIND, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(v(10:1:-3), 3_MPI_COUNT_KIND, MPI_INTEGER, next, 2, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(w(1:9:4) == [prev * 100 + 10, prev * 100 + 7, prev * 100 + 4]) .and. &
             all(w([2, 3, 4, 6, 7, 8, 10]) == -1), 'MPI_Isend_c / MPI_Irecv_c of sections')

  ! One-sided: put every other element of v into the next process's window, get them back
  ! into a strided section.
  w = -1
  sz = 10 * 4
  call MPI_Win_create(w, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_fence(0, win)
  call MPI_Put(v(1:10:2), 5, MPI_INTEGER, next, 0_MPI_ADDRESS_KIND, 5, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(w(1:5) == [(prev * 100 + i, i = 1, 10, 2)]) .and. all(w(6:10) == -1), &
             'MPI_Put from a strided section')
  v = -1
  call MPI_Get(v(2:10:2), 5, MPI_INTEGER, next, 0_MPI_ADDRESS_KIND, 5, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(all(v(2:10:2) == [(rank * 100 + i, i = 1, 10, 2)]) .and. all(v(1:9:2) == -1), &
             'MPI_Get into a strided section')
  call MPI_Win_free(win)

  req = MPI_REQUEST_NULL
  call MPI_Ireduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Ireduce, contiguous into strided: MPI_ERR_BUFFER')
  call report()
  call MPI_Finalize()
end program subarray_f08_strict
