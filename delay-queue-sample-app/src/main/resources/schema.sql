-- The sample's orders, in the in-memory H2 database Spring Boot starts and runs this script on.
create table if not exists orders (
  id        varchar(32)  primary key,
  customer  varchar(100) not null,
  amount    decimal(19, 2) not null,
  state     varchar(20)  not null,
  placed_at timestamp(3) with time zone not null,
  pay_by    timestamp(3) with time zone not null,
  paid_at   timestamp(3) with time zone,
  closed_at timestamp(3) with time zone
);

create index if not exists orders_customer_state on orders (customer, state);
