! Array sections as choice buffers through mpi_f08 (TYPE(*), DIMENSION(..), the
! compiler's descriptor passed on): strided and reversed sections and matrix rows in
! MPI_Send / MPI_Recv, MPI_Bcast and the large-count MPI_Sendrecv arrive as their elements and leave the gaps alone; contiguous
! sections in nonblocking calls. (Noncontiguous sections in nonblocking calls: see
! subarray_f08_strict, which also reduces into a section, which MPICH's mpi_f08 fails:
! it describes the section by a derived datatype that MPI_MAX refuses. oxmpi's layer
! for MPICH-built programs refuses such sections: it copies sections, and a copy cannot
! outlive the call.)
program subarray_f08
  use mpi_f08
  use testutil
  implicit none
  integer :: rank, nprocs, next, prev, i, j
  integer :: v(10), w(10), m(4, 6)
  type(MPI_Status) :: st
  type(MPI_Request) :: req(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)

  m = reshape([(i, i = 1, 24)], [4, 6]) + rank * 100
  w = -1
  if (nprocs == 1) then
    w(10:1:-2) = m(2, 1:5)
  else if (mod(rank, 2) == 0) then
    call MPI_Send(m(2, 1:5), 5, MPI_INTEGER, next, 2, MPI_COMM_WORLD)
    call MPI_Recv(w(10:1:-2), 5, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, st)
  else
    call MPI_Recv(w(10:1:-2), 5, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, st)
    call MPI_Send(m(2, 1:5), 5, MPI_INTEGER, next, 2, MPI_COMM_WORLD)
  end if
  do i = 1, 5
    call check(w(12 - 2 * i) == prev * 100 + 2 + 4 * (i - 1) .and. w(11 - 2 * i) == -1, &
               'MPI_Send of a matrix row / MPI_Recv into a reversed section')
  end do

  v = [(rank * 10 + i, i = 1, 10)]
  w = -1
  call MPI_Sendrecv(v(1:10:2), 5_MPI_COUNT_KIND, MPI_INTEGER, next, 3, &
                    w(2:10:2), 5_MPI_COUNT_KIND, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, st)
  call check(all(w(2:10:2) == [(prev * 10 + i, i = 1, 10, 2)]) .and. all(w(1:9:2) == -1), &
             'large-count MPI_Sendrecv of sections')

  m = -rank
  if (rank == 0) m(3, :) = [(10 * j, j = 1, 6)]
  call MPI_Bcast(m(3, :), 6, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(all(m(3, :) == [(10 * j, j = 1, 6)]) .and. all(m(1:2, :) == -rank) .and. &
             all(m(4, :) == -rank), 'MPI_Bcast of a matrix row')


  v = [(rank * 10 + i, i = 1, 10)]
  w = -1
  call MPI_Irecv(w(2:5), 4, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, req(1))
  call MPI_Isend(v(3:6), 4, MPI_INTEGER, next, 4, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  call check(all(w(2:5) == [(prev * 10 + i, i = 3, 6)]) .and. w(1) == -1 .and. w(6) == -1, &
             'nonblocking calls with contiguous sections')
  call report()
  call MPI_Finalize()
end program subarray_f08
