! Array sections as choice buffers through the mpi module (TYPE(*), DIMENSION(..)
! interfaces: the library gets the compiler's descriptor, not a copy): strided and
! reversed sections of a vector and a row of a matrix in MPI_Send / MPI_Recv,
! MPI_Sendrecv, MPI_Bcast, MPI_Allreduce (also with MPI_IN_PLACE) and MPI_Gather arrive as
! their elements, in array element order, and leave the elements between them alone; an
! array element passed for the rest of the array (sequence association) and contiguous
! sections work in nonblocking calls. Noncontiguous sections in nonblocking calls only
! where MPI_SUBARRAYS_SUPPORTED is .TRUE. (subarray_strict checks more of them).
program subarray
  use mpi
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, i, j, ierr, req(2)
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  integer :: v(10), w(10), m(4, 6), g(64), s(3), r(3)
  real(kind=8) :: a(10), b(10)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  ! Sendrecv between strided sections.
  a = [(real(rank * 100 + i, 8), i = 1, 10)]
  b = -1
  call MPI_Sendrecv(a(1:10:2), 5, MPI_DOUBLE_PRECISION, next, 1, &
                    b(2:10:2), 5, MPI_DOUBLE_PRECISION, prev, 1, MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Sendrecv of sections: ierror')
  do i = 1, 5
    call check(b(2 * i) == real(prev * 100 + 2 * i - 1, 8) .and. b(2 * i - 1) == -1, &
               'MPI_Sendrecv of strided sections')
  end do

  ! Send / Recv: a row of a matrix into a reversed section (even ranks send first).
  m = reshape([(i, i = 1, 24)], [4, 6]) + rank * 100
  w = -1
  if (nprocs == 1) then
    w(10:1:-2) = m(2, 1:5)
  else if (mod(rank, 2) == 0) then
    call MPI_Send(m(2, 1:5), 5, MPI_INTEGER, next, 2, MPI_COMM_WORLD, ierr)
    call MPI_Recv(w(10:1:-2), 5, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, st, ierr)
  else
    call MPI_Recv(w(10:1:-2), 5, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, st, ierr)
    call MPI_Send(m(2, 1:5), 5, MPI_INTEGER, next, 2, MPI_COMM_WORLD, ierr)
  end if
  do i = 1, 5
    call check(w(12 - 2 * i) == prev * 100 + 2 + 4 * (i - 1) .and. w(11 - 2 * i) == -1, &
               'MPI_Send of a matrix row / MPI_Recv into a reversed section')
  end do
  if (nprocs > 1) then
    call MPI_Get_count(st, MPI_INTEGER, i, ierr)
    call check(i == 5 .and. st(MPI_SOURCE) == prev, 'status of a receive into a section')
  end if

  ! Bcast of a matrix row from rank 0: the other rows stay as they were.
  m = -rank
  if (rank == 0) m(3, :) = [(10 * j, j = 1, 6)]
  call MPI_Bcast(m(3, :), 6, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. all(m(3, :) == [(10 * j, j = 1, 6)]), &
             'MPI_Bcast of a matrix row')
  call check(all(m(1:2, :) == -rank) .and. all(m(4, :) == -rank), &
             'MPI_Bcast of a matrix row leaves the other rows alone')

  ! Allreduce from one section into another, and in place in a section.
  v = [(rank + i, i = 1, 10)]
  w = -1
  call MPI_Allreduce(v(1:10:3), w(10:1:-3), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(w(13 - 3 * i) == nprocs * (1 + 3 * (i - 1)) + nprocs * (nprocs - 1) / 2, &
               'MPI_Allreduce between sections')
  end do
  call check(all(w([2, 3, 5, 6, 8, 9]) == -1), 'MPI_Allreduce leaves the gaps alone')
  m = 1
  m(1, :) = rank
  call MPI_Allreduce(MPI_IN_PLACE, m(1, :), 6, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(all(m(1, :) == nprocs - 1) .and. all(m(2:4, :) == 1), &
             'MPI_Allreduce with MPI_IN_PLACE in a matrix row')

  ! Gather into every other element.
  g = -1
  s = [rank, rank + 1, rank + 2]
  call MPI_Gather(s(3:1:-1), 3, MPI_INTEGER, g(1:6 * nprocs:2), 3, MPI_INTEGER, 0, &
                  MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do j = 0, nprocs - 1
      call check(all(g(6 * j + 1:6 * j + 6:2) == [j + 2, j + 1, j]) .and. &
                 all(g(6 * j + 2:6 * j + 6:2) == -1), 'MPI_Gather into a section')
    end do
  end if

  ! An element for the rest of the array (sequence association), and contiguous
  ! sections, in nonblocking calls.
  v = [(rank * 10 + i, i = 1, 10)]
  w = -1
  call MPI_Irecv(w(2), 4, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(v(3:6), 4, MPI_INTEGER, next, 3, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, sts, ierr)
  call check(all(w(2:5) == [(prev * 10 + i, i = 3, 6)]) .and. w(1) == -1 .and. w(6) == -1, &
             'nonblocking calls with an element and a contiguous section')

  if (MPI_SUBARRAYS_SUPPORTED) then
    r = -1
    s = [rank, 2 * rank, 3 * rank]
    v = -1
    call MPI_Irecv(v(1:5:2), 3, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(m(1, 1:6:2), 3, MPI_INTEGER, next, 4, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, sts, ierr)
    call check(all(v(1:5:2) == nprocs - 1) .and. all(v(2:4:2) == -1), &
               'nonblocking calls with noncontiguous sections')
  end if

  call report()
  call MPI_Finalize(ierr)
end program subarray
