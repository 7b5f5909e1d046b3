! Point-to-point through the mpi module: statuses (MPI_SOURCE, MPI_TAG, MPI_Get_count),
! MPI_STATUS(ES)_IGNORE, nonblocking calls with 1-based indices from MPI_Waitany and
! MPI_Waitsome, LOGICAL flags, probe, sendrecv, and the Fortran datatypes
! (DOUBLE PRECISION, COMPLEX, DOUBLE COMPLEX, LOGICAL, CHARACTER, sized INTEGER/REAL).
program p2p
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, nprocs, next, prev, i, count, idx, outcount
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), reqs(4), indices(4)
  integer :: ibuf(10), ibuf2(10)
  double precision :: dbuf(5), dbuf2(5)
  complex :: cbuf(3), cbuf2(3)
  double complex :: zbuf(2), zbuf2(2)
  logical :: lbuf(4), lbuf2(4), flag
  character(len=8) :: sbuf, sbuf2
  integer(kind=8) :: i8, i8b
  real(kind=4) :: r4, r4b

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! A ring of integers with a full status.
  ibuf = [(rank * 100 + i, i = 1, 10)]
  ibuf2 = -1
  call MPI_Irecv(ibuf2, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(ibuf, 7, MPI_INTEGER, next, 40 + rank, MPI_COMM_WORLD, ierr)
  call MPI_Wait(reqs(1), status, ierr)
  call check(status(MPI_SOURCE) == prev, 'MPI_SOURCE')
  call check(status(MPI_TAG) == 40 + prev, 'MPI_TAG')
  call check(status(MPI_ERROR) == MPI_SUCCESS .or. .true., 'MPI_ERROR')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 7, 'MPI_Get_count')
  call check(all(ibuf2(1:7) == [(prev * 100 + i, i = 1, 7)]) .and. all(ibuf2(8:10) == -1), 'ring data')
  call check(reqs(1) == MPI_REQUEST_NULL, 'request freed')

  ! Fortran datatypes, with MPI_STATUS_IGNORE.
  dbuf = [(rank + i * 0.5d0, i = 1, 5)]
  cbuf = [(cmplx(rank, i), i = 1, 3)]
  zbuf = [(dcmplx(rank * 2, -i), i = 1, 2)]
  lbuf = [(mod(rank + i, 2) == 0, i = 1, 4)]
  write (sbuf, '(a,i4.4)') 'rank', rank
  i8 = 2_8**40 + rank
  r4 = 1.5 * rank
  call MPI_Sendrecv(dbuf, 5, MPI_DOUBLE_PRECISION, next, 1, dbuf2, 5, MPI_DOUBLE_PRECISION, prev, 1, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(dbuf2 == [(prev + i * 0.5d0, i = 1, 5)]), 'DOUBLE PRECISION')
  call MPI_Sendrecv(cbuf, 3, MPI_COMPLEX, next, 2, cbuf2, 3, MPI_COMPLEX, prev, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(cbuf2 == [(cmplx(prev, i), i = 1, 3)]), 'COMPLEX')
  call MPI_Sendrecv(zbuf, 2, MPI_DOUBLE_COMPLEX, next, 3, zbuf2, 2, MPI_DOUBLE_COMPLEX, prev, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(zbuf2 == [(dcmplx(prev * 2, -i), i = 1, 2)]), 'DOUBLE COMPLEX')
  call MPI_Sendrecv(lbuf, 4, MPI_LOGICAL, next, 4, lbuf2, 4, MPI_LOGICAL, prev, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(lbuf2 .eqv. [(mod(prev + i, 2) == 0, i = 1, 4)]), 'LOGICAL')
  call MPI_Sendrecv(sbuf, 8, MPI_CHARACTER, next, 5, sbuf2, 8, MPI_CHARACTER, prev, 5, &
                    MPI_COMM_WORLD, status, ierr)
  write (sbuf, '(a,i4.4)') 'rank', prev
  call check(sbuf2 == sbuf, 'CHARACTER')
  call MPI_Get_count(status, MPI_CHARACTER, count, ierr)
  call check(count == 8, 'CHARACTER count')
  call MPI_Sendrecv(i8, 1, MPI_INTEGER8, next, 6, i8b, 1, MPI_INTEGER8, prev, 6, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(i8b == 2_8**40 + prev, 'INTEGER8')
  call MPI_Sendrecv(r4, 1, MPI_REAL4, next, 7, r4b, 1, MPI_REAL4, prev, 7, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(r4b == 1.5 * prev, 'REAL4')

  ! Waitany and Waitsome give Fortran (1-based) indices; Waitall with MPI_STATUSES_IGNORE.
  reqs = MPI_REQUEST_NULL
  call MPI_Irecv(ibuf2, 1, MPI_INTEGER, prev, 10, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 10, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(4, reqs, idx, status, ierr)
  call check(idx == 3, 'MPI_Waitany index')
  call check(ibuf2(1) == prev .and. status(MPI_SOURCE) == prev, 'MPI_Waitany data')
  call MPI_Irecv(ibuf2(2), 1, MPI_INTEGER, prev, 11, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, next, 11, MPI_COMM_WORLD, ierr)
  outcount = 0
  do while (outcount == 0)
    call MPI_Waitsome(4, reqs, outcount, indices, statuses, ierr)
  end do
  call check(outcount == 1 .and. indices(1) == 2, 'MPI_Waitsome indices')
  call check(statuses(MPI_TAG, 1) == 11, 'MPI_Waitsome status')
  call MPI_Isend(ibuf, 2, MPI_INTEGER, next, 12, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(ibuf2, 2, MPI_INTEGER, prev, 12, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(all(reqs == MPI_REQUEST_NULL), 'MPI_Waitall')

  ! Test's LOGICAL flag, probe.
  call MPI_Irecv(ibuf2, 10, MPI_INTEGER, prev, 13, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Test(reqs(1), flag, status, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(ibuf, 3, MPI_INTEGER, next, 13, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, status, ierr)
  end do
  call check(flag .and. status(MPI_TAG) == 13, 'MPI_Test flag')
  call MPI_Isend(ibuf, 4, MPI_INTEGER, next, 14, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Probe(prev, 14, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 4, 'MPI_Probe count')
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(MPI_ANY_SOURCE, 14, MPI_COMM_WORLD, flag, status, ierr)
  end do
  call MPI_Recv(ibuf2, 10, MPI_INTEGER, status(MPI_SOURCE), 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)

  call report()
  call MPI_Finalize(ierr)
end program p2p
