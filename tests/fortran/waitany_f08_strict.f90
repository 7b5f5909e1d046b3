! mpi_f08's MPI_Waitany and MPI_Testany count indices from 1, as the Fortran bindings do.
! Strict: MPICH 4.0.2's mpi_f08 returns C's 0-based index.
program waitany_f08_strict
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, idx, x, y
  type(MPI_Request) :: reqs(3)
  type(MPI_Status) :: status
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  reqs = MPI_REQUEST_NULL
  x = rank
  call MPI_Irecv(y, 1, MPI_INTEGER, mod(rank + nprocs - 1, nprocs), 5, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(x, 1, MPI_INTEGER, mod(rank + 1, nprocs), 5, MPI_COMM_WORLD)
  call MPI_Waitany(3, reqs, idx, status)
  if (idx /= 2 .or. status%MPI_TAG /= 5) then
    print *, 'MPI_Waitany index ', idx
    errs = errs + 1
  end if
  call MPI_Irecv(y, 1, MPI_INTEGER, mod(rank + nprocs - 1, nprocs), 6, MPI_COMM_WORLD, reqs(3))
  call MPI_Send(x, 1, MPI_INTEGER, mod(rank + 1, nprocs), 6, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(3, reqs, idx, flag, status)
  end do
  if (idx /= 3) then
    print *, 'MPI_Testany index ', idx
    errs = errs + 1
  end if
  call report()
  call MPI_Finalize()
end program waitany_f08_strict
