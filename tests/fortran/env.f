! Environment calls through mpif.h in fixed source form: init, sizes, version,
! timers, processor name, error strings and classes, communicator names
! (CHARACTER arguments: blank padding, truncation to the Fortran length).
      PROGRAM ENV
      USE TESTUTIL
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, VER, SUBVER, LEN, CLS
      INTEGER TAGUB
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      CHARACTER*(MPI_MAX_OBJECT_NAME) CNAME
      CHARACTER*4 SHORT
      DOUBLE PRECISION T1, T2
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_INIT(IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) ERRS = ERRS + 1
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      IF (RANK .LT. 0 .OR. RANK .GE. NPROCS) ERRS = ERRS + 1
      CALL MPI_GET_VERSION(VER, SUBVER, IERR)
      IF (VER .LT. 3 .OR. SUBVER .LT. 0) THEN
         PRINT *, 'version ', VER, SUBVER
         ERRS = ERRS + 1
      END IF
      T1 = MPI_WTIME()
      T2 = MPI_WTIME()
      IF (T2 .LT. T1 .OR. MPI_WTICK() .LE. 0.0D0) ERRS = ERRS + 1
! Processor name: LEN characters, then blanks.
      PNAME = 'x'
      CALL MPI_GET_PROCESSOR_NAME(PNAME, LEN, IERR)
      IF (LEN .LE. 0 .OR. LEN .GT. MPI_MAX_PROCESSOR_NAME) THEN
         ERRS = ERRS + 1
      ELSE IF (LEN_TRIM(PNAME) .NE. LEN) THEN
         PRINT *, 'processor name not blank padded: ', LEN
         ERRS = ERRS + 1
      END IF
! A buffer shorter than the result is filled to its length, no more.
      CALL MPI_ERROR_STRING(MPI_ERR_RANK, ESTR, LEN, IERR)
      IF (IERR .NE. MPI_SUCCESS .OR. LEN .LE. 4) ERRS = ERRS + 1
      IF (LEN_TRIM(ESTR) .NE. LEN) ERRS = ERRS + 1
      CALL MPI_ERROR_STRING(MPI_ERR_RANK, SHORT, LEN, IERR)
      IF (SHORT .NE. ESTR(1:4)) THEN
         PRINT *, 'short error string: ', SHORT
         ERRS = ERRS + 1
      END IF
      CALL MPI_ERROR_CLASS(MPI_ERR_TRUNCATE, CLS, IERR)
      IF (CLS .NE. MPI_ERR_TRUNCATE) ERRS = ERRS + 1
! Communicator names, in and out.
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, CNAME, LEN, IERR)
      IF (CNAME .NE. 'MPI_COMM_WORLD' .OR. LEN .NE. 14) THEN
         PRINT *, 'world name: ', CNAME, LEN
         ERRS = ERRS + 1
      END IF
      CALL MPI_COMM_SET_NAME(MPI_COMM_SELF, 'my self   ', IERR)
      CALL MPI_COMM_GET_NAME(MPI_COMM_SELF, CNAME, LEN, IERR)
      IF (CNAME .NE. 'my self' .OR. LEN .NE. 7) THEN
         PRINT *, 'self name: ', CNAME, LEN
         ERRS = ERRS + 1
      END IF
! A predefined attribute reads as its INTEGER value.
      CALL MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, FLAG, IERR)
      IF (.NOT. FLAG .OR. TAGUB .LT. 32767) THEN
         PRINT *, 'MPI_TAG_UB: ', TAGUB, FLAG
         ERRS = ERRS + 1
      END IF
! An error is returned in IERROR with the right class.
      CALL MPI_SEND(RANK, 1, MPI_INTEGER, NPROCS, 0, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_ERROR_CLASS(IERR, CLS, LEN)
      IF (CLS .NE. MPI_ERR_RANK) THEN
         PRINT *, 'bad rank gave class ', CLS
         ERRS = ERRS + 1
      END IF
      CALL REPORT()
      CALL MPI_FINALIZE(IERR)
      CALL MPI_FINALIZED(FLAG, IERR)
      IF (.NOT. FLAG) PRINT *, 'MPI_FINALIZED false after MPI_FINALIZE'
      END
