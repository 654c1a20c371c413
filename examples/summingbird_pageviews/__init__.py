"""Page views per country and page: ``left_join`` against a user service, a custom monoid."""
