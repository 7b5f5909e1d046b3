! Dynamic processes through the mpi module, with CHARACTER arguments: MPI_COMM_SPAWN of
! this program with an argument list (ended by a blank entry) and an array of error
! codes, then with MPI_ARGV_NULL and MPI_ERRCODES_IGNORE; the children check their
! arguments and talk to the parents. With 2 or more ranks, the two halves of the job
! meet over a port: the low half's rank 0 opens it and publishes it under a service
! name, the high half's looks it up and connects (MPI_OPEN_PORT, MPI_PUBLISH_NAME,
! MPI_LOOKUP_NAME, MPI_COMM_ACCEPT / MPI_COMM_CONNECT, MPI_UNPUBLISH_NAME,
! MPI_CLOSE_PORT).
program dpm
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, nprocs, parent, inter, half, low, sum, i, v
  integer :: codes(2)
  character(len=512) :: self
  character(len=16) :: args(2)
  character(len=MPI_MAX_PORT_NAME) :: port, found
  character(len=64) :: service

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
    call child(parent)
    stop
  end if

  ! Spawning, twice: with arguments and error codes, then with neither.
  call get_command_argument(0, self)
  args(1) = 'child-arg'
  args(2) = ' '
  codes = -1
  call MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_COMM_SPAWN with arguments')
  if (rank == 0) call check(all(codes == MPI_SUCCESS), 'MPI_COMM_SPAWN error codes')
  call talk(inter, 1)
  call MPI_Comm_spawn(self, MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                      MPI_ERRCODES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_COMM_SPAWN with MPI_ARGV_NULL')
  call talk(inter, 0)

  ! Ports between the halves.
  if (nprocs >= 2) then
    half = nprocs / 2
    low = merge(1, 0, rank < half)
    call MPI_Comm_split(MPI_COMM_WORLD, low, rank, sum, ierr)
    port = ' '
    write (service, '(a,i0)') 'oxmpi-fortran-dpm-', getpid_of_root()
    if (rank == 0) then
      call MPI_Open_port(MPI_INFO_NULL, port, ierr)
      call check(ierr == MPI_SUCCESS .and. len_trim(port) > 0, 'MPI_OPEN_PORT')
      call MPI_Publish_name(service, MPI_INFO_NULL, port, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_PUBLISH_NAME')
    end if
    call MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    if (rank == half) then
      found = 'x'
      call MPI_Lookup_name(service, MPI_INFO_NULL, found, ierr)
      call check(ierr == MPI_SUCCESS .and. found == port, 'MPI_LOOKUP_NAME')
    end if
    if (low == 1) then
      call MPI_Comm_accept(port, MPI_INFO_NULL, 0, sum, inter, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_COMM_ACCEPT')
    else
      call MPI_Comm_connect(port, MPI_INFO_NULL, 0, sum, inter, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_COMM_CONNECT')
    end if
    call MPI_Comm_remote_size(inter, i, ierr)
    call check(i == merge(nprocs - half, half, low == 1), 'remote size over the port')
    call MPI_Allreduce(rank, v, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    if (low == 1) then
      call check(v == (nprocs - 1) * nprocs / 2 - (half - 1) * half / 2, 'allreduce over the port')
    else
      call check(v == (half - 1) * half / 2, 'allreduce over the port')
    end if
    call MPI_Comm_disconnect(inter, ierr)
    call check(inter == MPI_COMM_NULL, 'MPI_COMM_DISCONNECT')
    call MPI_Comm_free(sum, ierr)
    if (rank == 0) then
      call MPI_Unpublish_name(service, MPI_INFO_NULL, port, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_UNPUBLISH_NAME')
      call MPI_Close_port(port, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_CLOSE_PORT')
    end if
  end if
  call report()
  call MPI_Finalize(ierr)
contains
  ! The parents' side of one spawn: each child gets its rank and the number of
  ! arguments it must have, and answers with 100 + its rank.
  subroutine talk(inter, nargs)
    integer, intent(inout) :: inter
    integer, intent(in) :: nargs
    integer :: n, k, msg(2), back, st(MPI_STATUS_SIZE)
    call MPI_Comm_remote_size(inter, n, ierr)
    call check(n == 2, 'number of children')
    if (rank == 0) then
      do k = 0, n - 1
        msg = [k, nargs]
        call MPI_Send(msg, 2, MPI_INTEGER, k, 1, inter, ierr)
        call MPI_Recv(back, 1, MPI_INTEGER, k, 2, inter, st, ierr)
        call check(back == 100 + k, 'answer of a child')
      end do
    end if
    call MPI_Comm_disconnect(inter, ierr)
  end subroutine talk

  subroutine child(parent)
    integer, intent(inout) :: parent
    integer :: msg(2), st(MPI_STATUS_SIZE), back
    character(len=16) :: a
    call MPI_Recv(msg, 2, MPI_INTEGER, 0, 1, parent, st, ierr)
    call check(msg(1) == rank, 'rank told by the parent')
    call check(command_argument_count() == msg(2), 'number of arguments')
    if (msg(2) == 1) then
      call get_command_argument(1, a)
      call check(a == 'child-arg', 'argument of the child')
    end if
    back = 100 + rank
    call MPI_Send(back, 1, MPI_INTEGER, 0, 2, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    if (errs > 0) error stop 1
  end subroutine child

  ! A number the job shares (rank 0's process id), for a service name no other job uses.
  integer function getpid_of_root()
    integer :: p
    p = getpid()
    call MPI_Bcast(p, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    getpid_of_root = p
  end function getpid_of_root
end program dpm
