// Package mesosconv translates between the plan's types and the Mesos
// v1 protobuf types of github.com/mesos/mesos-go: offers and status
// updates in (Offer, Status), decisions out (Converter.Call, which
// builds ACCEPT, DECLINE, KILL, RECONCILE, REVIVE and SUPPRESS calls).
//
// Reservations are dynamic, in the refined form (one
// Resource.ReservationInfo of type DYNAMIC for the framework's role),
// labelled with plan.LabelFramework, plan.LabelPod and
// plan.LabelReservation. A pod's volume is a disk resource of that
// reservation with DiskInfo.persistence.id = the plan's volume id and
// DiskInfo.volume = {container_path, RW}. A LAUNCH's TaskInfo comes from
// the driver's TaskBuilder (command or executor, environment), given the
// task's resources: the reserved cpus and mem (unreserved for a
// controller) and the volume.
//
// The package's test runs the plan through this translation against
// scheduler/mesostest's fake master with the library's HTTP scheduler
// client: the smallest driver, and a model for `sluice scheduler`.
package mesosconv
