//! Process-management interface (PMI-1 "simple PMI" and PMI-2) for oxmpi: wire codecs,
//! the client the MPI library uses to learn its rank and exchange business cards, and
//! the server state machine `mpiexec` drives.
