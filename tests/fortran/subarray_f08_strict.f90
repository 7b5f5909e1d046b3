! mpi_f08: MPI_SUBARRAYS_SUPPORTED is .FALSE., and a noncontiguous section as the buffer
! of a nonblocking call (MPI_Isend, MPI_Iallreduce) is refused with an error of class
! MPI_ERR_BUFFER through the communicator's error handler; a strided section in a
! blocking call travels whole, MPI_IN_PLACE reductions in a section included (which
! MPICH's mpi_f08 fails: MPI_MAX on the datatype it makes of the section). oxmpi's
! module only (mtest-abi: oxmpi-header): MPICH's declares MPI_SUBARRAYS_SUPPORTED .TRUE.
program subarray_f08_strict
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, next, i, ierr, cls
  integer :: v(10), w(10)
  type(MPI_Request) :: req

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  call check(.not. MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED is .FALSE.')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  v = [(i, i = 1, 10)]
  req = MPI_REQUEST_NULL
  call MPI_Isend(v(1:10:2), 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Isend of a strided section: MPI_ERR_BUFFER')
  call MPI_Iallreduce(v(1:4), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER .and. req == MPI_REQUEST_NULL, &
             'MPI_Iallreduce into a strided section: MPI_ERR_BUFFER')
  w = -1
  call MPI_Allreduce(v(1:7:2), w(1:7:2), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(1:7:2) == nprocs * [1, 3, 5, 7]) .and. &
             all(w(2:6:2) == -1), 'MPI_Allreduce between strided sections')
  w = 1
  w(1:10:3) = rank
  call MPI_Allreduce(MPI_IN_PLACE, w(1:10:3), 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(w(1:10:3) == nprocs - 1) .and. &
             all(w([2, 3, 5, 6, 8, 9]) == 1), 'MPI_Allreduce with MPI_IN_PLACE in a section')
  call report()
  call MPI_Finalize()
end program subarray_f08_strict
