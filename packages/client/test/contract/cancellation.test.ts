import { cancellation } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([cancellation])
