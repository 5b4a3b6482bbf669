//! Part 4 service request and response structures and their UA Binary encodings.
