//! The PanDA WMS on the WMS boundary (issue 11): JEDI task brokerage to nuclei, job
//! generation and job brokerage to PanDA queues, Harvester's pilots, dispatch by global share,
//! the timeout daemon, and data on the network. Under construction: [`view`] builds the inputs
//! of the decision modules.

pub mod view;
