! oxmpi's mpi module: MPI_SUBARRAYS_SUPPORTED is .FALSE., and a noncontiguous array
! section as the buffer of a call whose operation outlives it (MPI_Isend, MPI_Irecv,
! MPI_Ibcast, MPI_Send_init, MPI_Win_create) is refused with an error of class
! MPI_ERR_BUFFER through the communicator's error handler, the request left alone: the
! interfaces pass the section's descriptor (TYPE(*), DIMENSION(..)), so no copy of the
! compiler's could be sent after the call returned. A contiguous section or a scalar
! is accepted. (MPICH's module passes a compiler's copy instead, so the program is
! oxmpi's only: mtest-abi: oxmpi-header.)
program subarray_strict
  use mpi
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, ierr, cls, req, win, i
  integer :: v(10), w(10)
  integer :: st(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call check(.not. MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED is .FALSE.')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  v = [(i, i = 1, 10)]

  req = MPI_REQUEST_NULL
  call MPI_Isend(v(1:10:2), 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Isend of a strided section: MPI_ERR_BUFFER')
  call MPI_Irecv(w(10:1:-1), 10, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Irecv into a reversed section: MPI_ERR_BUFFER')
  call MPI_Ibcast(v(1:10:3), 4, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Ibcast of a strided section: MPI_ERR_BUFFER')
  call MPI_Send_init(v(2:10:2), 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Send_init of a strided section: MPI_ERR_BUFFER')
  call MPI_Win_create(v(1:10:2), 20_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &
                      win, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_BUFFER, 'MPI_Win_create of a strided section: MPI_ERR_BUFFER')

  ! Contiguous sections and scalars are accepted.
  w = -1
  call MPI_Irecv(w(2:5), 4, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, req, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Irecv into a contiguous section')
  call MPI_Send(v(1:7:2), 4, MPI_INTEGER, next, 2, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Send of a strided section')
  call MPI_Wait(req, st, ierr)
  call check(all(w(2:5) == [1, 3, 5, 7]) .and. w(1) == -1 .and. w(6) == -1, &
             'MPI_Send of a strided section into a contiguous one')

  call report()
  call MPI_Finalize(ierr)
end program subarray_strict
