mod approvals;
mod child;
mod dynamic_tools;
mod fixture;
mod restart;
mod steering;
mod text_turn;
mod version;
